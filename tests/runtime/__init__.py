"""The runtime (rtcompile/runtime/): content parsers, coercion, tool schemas, scanning, the OpenAI adapters."""
