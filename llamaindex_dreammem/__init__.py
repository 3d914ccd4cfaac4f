"""llamaindex_dreammem adapters for DreamMem (in progress)."""

__all__: list[str] = []
