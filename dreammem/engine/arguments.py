"""Checks of what a store is built from: its path, config, embedder and graph.

A wrong object passed to :class:`~dreammem.memory.DreamMemory` (a dict for the
config, a model name for the embedder, a file where a folder belongs) is a
:class:`~dreammem.errors.ConfigError` at once, not an ``AttributeError`` deep inside
the first write.
"""

from __future__ import annotations

import os
from pathlib import Path

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.errors import ConfigError
from dreammem.stores.base import GraphStore

__all__ = ["check_config", "check_embedder", "check_graph", "check_store_path"]


def check_store_path(path: object) -> str | Path | None:
    """A store path: ``None``, a ``str`` or an ``os.PathLike`` without NUL characters."""
    if path is None:
        return None
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise ConfigError(f"the store path must be a str or a Path, got {type(path).__name__}")
    if "\x00" in path or not path.strip():
        raise ConfigError(f"the store path {path!r} is empty or holds a NUL character")
    return path


def check_config(config: object) -> DreamMemConfig:
    """The config (``None``: the defaults)."""
    if config is None:
        return DreamMemConfig()
    if not isinstance(config, DreamMemConfig):
        raise ConfigError(f"config must be a DreamMemConfig (see DreamMemConfig.load), {_got(config)}")
    return config


def check_embedder(embedder: object) -> Embedder | None:
    """An embedder: a ``name`` (str), a ``dim`` (int > 0), ``embed_documents`` and ``embed_query``."""
    if embedder is None:
        return None
    name, dim = getattr(embedder, "name", None), getattr(embedder, "dim", None)
    methods = all(callable(getattr(embedder, m, None)) for m in ("embed_documents", "embed_query"))
    sized = isinstance(dim, int) and not isinstance(dim, bool) and dim > 0
    if not isinstance(name, str) or not sized or not methods:
        raise ConfigError(
            f"embedder must be an Embedder (name, dim, embed_documents, embed_query), "
            f"got {type(embedder).__name__}; a model name goes in config.embedding.model"
        )
    return embedder  # type: ignore[return-value]  # checked structurally above


def check_graph(graph: object) -> GraphStore | None:
    """A graph store (``None``: the configured one)."""
    if graph is None:
        return None
    if not isinstance(graph, GraphStore):
        raise ConfigError(f"graph must be a GraphStore such as Neo4jGraphStore(...), {_got(graph)}")
    return graph


def _got(value: object) -> str:
    return f"got {type(value).__name__}"
