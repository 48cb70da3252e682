"""The message and event types, in their template-independent form.

The interpreter uses these. A generated module does not lift them: it defines its own `Message`,
`Event` and `FieldName` with the template's exact keys and field names (TypedDicts and Literals), so
the engine code lifted next to them is type-checked against that one template.
"""

from typing import Any, TypeAlias

FieldName: TypeAlias = str
Message: TypeAlias = dict[str, Any]
Event: TypeAlias = dict[str, Any]
RegionOpen: TypeAlias = dict[str, Any]
RegionChunk: TypeAlias = dict[str, Any]
RegionClose: TypeAlias = dict[str, Any]
RegionMalformed: TypeAlias = dict[str, Any]
