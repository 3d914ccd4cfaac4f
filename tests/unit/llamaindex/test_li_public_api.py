"""The public surface of llamaindex_dreammem is pinned: outside code relies on these names."""

from __future__ import annotations

import inspect

import llamaindex_dreammem

PUBLIC = ["DreamMemBlock", "DreamMemMemory", "DreamMemRetriever", "as_llm", "create_memory_tools"]


def test_all_is_pinned() -> None:
    assert sorted(llamaindex_dreammem.__all__) == PUBLIC
    for name in PUBLIC:
        obj = getattr(llamaindex_dreammem, name)
        assert inspect.getdoc(obj), f"{name} has no docstring"


def test_signatures_of_the_issue() -> None:
    from llamaindex_dreammem import DreamMemBlock, DreamMemMemory, DreamMemRetriever, create_memory_tools

    params = inspect.signature(DreamMemMemory.from_defaults).parameters
    assert {"memory", "user_id", "session_id"} <= set(params) and params["session_id"].default is None
    block = inspect.signature(DreamMemBlock.__init__).parameters
    assert {"memory", "user_id", "name", "priority"} <= set(block) and block["name"].default == "dreammem"
    retriever = inspect.signature(DreamMemRetriever.__init__).parameters
    assert retriever["k"].default == 5 and {"memory", "user_id"} <= set(retriever)
    tools = inspect.signature(create_memory_tools).parameters
    assert next(iter(tools)) == "memory" and tools["user_id"].kind is inspect.Parameter.KEYWORD_ONLY


def test_core_does_not_import_llamaindex() -> None:
    import subprocess
    import sys

    code = (
        "import sys, dreammem, dreammem.agent_api; "
        "print(any(m.startswith('llama_index') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
