"""The engine under :class:`~dreammem.DreamMemory`: stores, derived indexes, locks, one unit of work."""

from dreammem.engine.core import Engine, is_server_uri
from dreammem.engine.embedded import resolve_paths, store_files
from dreammem.engine.unit import UnitOfWork

__all__ = ["Engine", "UnitOfWork", "is_server_uri", "resolve_paths", "store_files"]
