"""The front end (rtcompile/frontend/): reading template sources with positions, loading, validation, messages."""
