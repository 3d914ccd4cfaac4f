"""The top-level ``dreammem`` namespace is pinned: adding or dropping a public name is a decision."""

import inspect
import subprocess
import sys
import typing

import dreammem
from dreammem import DreamMemory

PUBLIC = [
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


def test_all_is_pinned_and_every_name_resolves() -> None:
    assert dreammem.__all__ == PUBLIC
    for name in PUBLIC:
        assert getattr(dreammem, name) is not None, name


def test_every_class_the_facade_returns_or_takes_is_exported() -> None:
    exported = {getattr(dreammem, name) for name in PUBLIC if isinstance(getattr(dreammem, name), type)}
    seen: set[type] = set()
    for name, method in inspect.getmembers(DreamMemory, inspect.isfunction):
        if name.startswith("_") and name != "__init__":
            continue
        hints = typing.get_type_hints(method)
        for hint in hints.values():
            for part in (hint, *typing.get_args(hint)):
                for leaf in (part, *typing.get_args(part)):
                    if isinstance(leaf, type) and leaf.__module__.startswith("dreammem"):
                        seen.add(leaf)
    assert seen, "the facade's annotations name no dreammem classes"
    missing = {cls.__name__ for cls in seen} - {cls.__name__ for cls in exported}
    assert not missing, f"returned or taken by DreamMemory but not exported: {sorted(missing)}"


def test_importing_dreammem_or_its_cli_does_not_load_the_benchmark_harness() -> None:
    code = (
        "import sys, dreammem, dreammem.cli; "
        "print(sorted(m for m in sys.modules if m.startswith(('dreammem_bench', 'bm25s'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
