"""Storage backends and their contracts."""

from dreammem.stores.base import GraphStore, VectorIndex
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore

__all__ = ["FaissVectorIndex", "GraphStore", "SQLiteRecordStore", "VectorIndex"]
