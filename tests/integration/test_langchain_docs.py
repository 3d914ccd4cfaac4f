"""The README's LangChain quick start and the LangChain example run as written."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory
from langchain_dreammem.testing import ScriptedChatModel

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def _readme_block(section: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", body, re.S)
    assert match, f"no python block in README section {section!r}"
    return match.group(1)


def test_readme_quick_start_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _readme_block("LangChain")
    assert len([line for line in code.splitlines() if line.strip()]) <= 9
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}  # nothing predefined: the snippet runs as written
    exec(compile(code, "README.md", "exec"), namespace)
    assert isinstance(namespace["model"], ScriptedChatModel)
    memory: DreamMemory = namespace["memory"]
    try:
        assert [r.content for r in memory.get_all(user_id="alice")][-1] == "I'm vegetarian"
        assert memory.recall("what food?", user_id="alice", k=1)[0].record.content == "I'm vegetarian"
    finally:
        memory.close()
    assert (tmp_path / "memory").is_dir()


def test_example_runs_offline_across_a_reopen(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import langchain_agent  # noqa: PLC0415 - the example is importable only once examples/ is on sys.path
    finally:
        sys.path.pop(0)
    lines = langchain_agent.run(str(tmp_path / "memory"))
    session_2 = lines[lines.index("== session 2") :]
    tool_lines = [line for line in session_2 if line.startswith("tool search_memory:")]
    assert tool_lines and "window seats" in "\n".join(session_2)
    injected = "\n".join(session_2[session_2.index("system message the model saw on its first call:") :])
    assert "window seats" in injected and "2,000 USD" in injected
