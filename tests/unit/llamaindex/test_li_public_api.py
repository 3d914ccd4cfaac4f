"""The public surface of llamaindex_dreammem is pinned: outside code relies on these names."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
import tomllib
from pathlib import Path

import llamaindex_dreammem
from llamaindex_dreammem import DreamMemBlock, DreamMemMemory, DreamMemRetriever, create_memory_tools

PUBLIC = ["DreamMemBlock", "DreamMemMemory", "DreamMemRetriever", "as_llm", "create_memory_tools"]


def test_all_is_pinned() -> None:
    assert sorted(llamaindex_dreammem.__all__) == PUBLIC
    for name in PUBLIC:
        obj = getattr(llamaindex_dreammem, name)
        assert inspect.getdoc(obj), f"{name} has no docstring"


def test_signatures_of_the_issue() -> None:
    params = inspect.signature(DreamMemMemory.from_defaults).parameters
    assert {"memory", "user_id", "session_id"} <= set(params) and params["session_id"].default is None
    block = inspect.signature(DreamMemBlock.__init__).parameters
    assert {"memory", "user_id", "name", "priority"} <= set(block) and block["name"].default == "dreammem"
    retriever = inspect.signature(DreamMemRetriever.__init__).parameters
    assert retriever["k"].default == 5 and {"memory", "user_id"} <= set(retriever)
    tools = inspect.signature(create_memory_tools).parameters
    assert next(iter(tools)) == "memory" and tools["user_id"].kind is inspect.Parameter.KEYWORD_ONLY


def test_core_does_not_import_llamaindex() -> None:
    code = (
        "import sys, dreammem, dreammem.agent_api; "
        "print(any(m.startswith('llama_index') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_llamaindex_extra_is_all_the_adapters_import() -> None:
    """`pip install "dreammem[llamaindex]"` brings llama-index-core; nothing else is imported.

    SQLAlchemy is llama-index-core's own dependency: its ``Memory`` takes an ``AsyncEngine``.
    """

    package = Path(llamaindex_dreammem.__file__).parent
    allowed = {"llama_index", "sqlalchemy", "dreammem", "llamaindex_dreammem", *sys.stdlib_module_names}
    for source in package.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                assert name.split(".")[0] in allowed, f"{source.name} imports {name}"
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("llama_index"):
                assert (node.module or "").startswith("llama_index.core"), f"{source.name}: {node.module}"

    pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text(encoding="utf-8"))
    extra = pyproject["project"]["optional-dependencies"]["llamaindex"]
    assert [req.split(">")[0] for req in extra] == ["llama-index-core"]
