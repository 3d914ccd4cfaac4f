"""The engine's embedded backend: SQLite for the records, FAISS for the vectors, in local files.

:func:`open_embedded` builds what :class:`~dreammem.engine.Engine` owns when its
path is a directory, a ``.db`` file or ``None`` (in memory): the record store
(:class:`~dreammem.stores.sqlite.SQLiteRecordStore`), the graph (the embedded one
in the same SQLite file unless another is passed or configured) and the vector
lifecycle (:class:`~dreammem.engine.vectors.VectorLifecycle`, which keeps FAISS in
step with SQLite through its change log). It is the embedded twin of
:func:`dreammem.engine.server.open_server`; the engine itself sees only the
``RecordStore``, ``GraphStore`` and ``Vectors`` contracts.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dreammem.config import DreamMemConfig, EmbeddedGraphConfig
from dreammem.engine.vectors import VectorLifecycle
from dreammem.errors import ConfigError
from dreammem.stores.base import GraphStore
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.sqlite import SQLiteRecordStore

__all__ = ["DB_NAME", "EmbeddedBackend", "open_embedded", "resolve_paths", "store_files"]

DB_NAME = "dreammem.db"
"""The SQLite file's name inside a store directory."""


def store_files(path: str | Path) -> tuple[Path, Path]:
    """The SQLite file and the FAISS file of the embedded store at ``path``.

    ``path`` is a ``.db`` (``.sqlite``, ``.sqlite3``) file or a directory holding
    ``dreammem.db``; nothing is created.
    """
    p = Path(path)
    if p.suffix in {".db", ".sqlite", ".sqlite3"}:
        return p, p.with_suffix(".faiss")
    return p / DB_NAME, p / "vectors.faiss"


def resolve_paths(path: str | Path | None) -> tuple[str, Path | None]:
    """The SQLite file and the FAISS file for a store path, the folder made (``None``: in memory).

    Raises:
        ConfigError: the folder cannot be made.
    """
    if path is None:
        return ":memory:", None
    database, vectors = store_files(path)
    try:
        database.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file where a folder belongs, no permission, a bad name
        raise ConfigError(f"cannot make the store folder {database.parent}: {exc}") from exc
    return str(database), vectors


@dataclass(frozen=True)
class EmbeddedBackend:
    """What the engine owns on the embedded backend."""

    store: SQLiteRecordStore
    graph: GraphStore
    vectors: VectorLifecycle
    vectors_file: Path | None
    """The FAISS file (``None``: in memory)."""


def _default_graph(config: DreamMemConfig, store: SQLiteRecordStore) -> GraphStore:
    graph_config = config.graph
    if isinstance(graph_config, EmbeddedGraphConfig):
        return EmbeddedGraphStore(store)
    from dreammem.stores.neo4j import Neo4jGraphStore  # noqa: PLC0415 - the neo4j driver loads only when asked for

    auth = None if graph_config.user is None else (graph_config.user, graph_config.password or "")
    return Neo4jGraphStore(
        graph_config.uri, auth=auth, database=graph_config.database, timeout=graph_config.timeout
    )


def open_embedded(
    path: str | Path | None, config: DreamMemConfig, graph: GraphStore | None = None
) -> EmbeddedBackend:
    """Open (or create) the embedded store at ``path`` (``None``: in memory).

    Args:
        path: A directory or ``.db`` file; its folder is made.
        config: The settings (context weight, graph, vector index).
        graph: A graph store to use instead of the configured one.

    Raises:
        BackendError: the SQLite file cannot be opened or migrated.
    """
    db_path, faiss_path = resolve_paths(path)
    store = SQLiteRecordStore(db_path, context_weight=config.recall.context_weight)
    chosen = graph if graph is not None else _default_graph(config, store)
    return EmbeddedBackend(store, chosen, VectorLifecycle(store, faiss_path, config.vector_index), faiss_path)
