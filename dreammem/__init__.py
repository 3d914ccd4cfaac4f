"""DreamMem: long-term memory for LLM agents.

Quick start::

    from dreammem import DreamMemory

    with DreamMemory("./memory") as memory:
        memory.add("I prefer Excel reports over PDF", user_id="alice")
        for hit in memory.recall("which report format?", user_id="alice"):
            print(hit.record.content, hit.paths, hit.score)
"""

import logging

from dreammem.config import DreamMemConfig, load_config
from dreammem.crud import ImportResult, MemoryPage, PurgeResult
from dreammem.dream.context import DreamContext
from dreammem.dream.report import Change, Distilled, DreamReport
from dreammem.dream.undo import UndoResult
from dreammem.embed.base import Embedder
from dreammem.errors import (
    BackendError,
    ConfigError,
    DreamMemError,
    GraphUnavailableError,
    LLMBudgetError,
    LLMError,
    NotFoundError,
    ScopeError,
    StoreVersionError,
    ValidationError,
)
from dreammem.llm import LLM
from dreammem.memory import DreamMemory
from dreammem.recall.filters import RecallFilter
from dreammem.recall.pipeline import Reranker
from dreammem.recall.result import Hit, RecallResult
from dreammem.stores.base import GraphStore
from dreammem.types import Kind, Layer, MemoryRecord, Priority, Role, Source, Status

__all__ = [
    "LLM",
    "BackendError",
    "Change",
    "ConfigError",
    "Distilled",
    "DreamContext",
    "DreamMemConfig",
    "DreamMemError",
    "DreamMemory",
    "DreamReport",
    "Embedder",
    "GraphStore",
    "GraphUnavailableError",
    "Hit",
    "ImportResult",
    "Kind",
    "LLMBudgetError",
    "LLMError",
    "Layer",
    "MemoryPage",
    "MemoryRecord",
    "NotFoundError",
    "Priority",
    "PurgeResult",
    "RecallFilter",
    "RecallResult",
    "Reranker",
    "Role",
    "ScopeError",
    "Source",
    "Status",
    "StoreVersionError",
    "UndoResult",
    "ValidationError",
    "__version__",
    "load_config",
]

__version__ = "0.1.0"

logging.getLogger(__name__).addHandler(logging.NullHandler())
