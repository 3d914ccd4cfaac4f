"""The README's LlamaIndex quick start and the example script run as documented."""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def readme_snippet(heading: str) -> str:
    """The first python code block of a README section."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, f"no python block in README section {heading!r}"
    return match.group(1)


def test_readme_llamaindex_quick_start_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code = readme_snippet("LlamaIndex")
    exec(compile(code, "README.md#LlamaIndex", "exec"), {"__name__": "readme"})
    assert (tmp_path / "memory" / "dreammem.db").exists()


def test_example_runs_offline_and_shows_the_remembered_facts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["llamaindex_chat.py", "--path", str(tmp_path / "m"), "--user", "ann"])
    with pytest.raises(SystemExit) as done:
        runpy.run_path(str(ROOT / "examples" / "llamaindex_chat.py"), run_name="__main__")
    assert done.value.code == 0
    out = capsys.readouterr().out
    prompt = out.split("MockLLM echoes it):", 1)[1]
    assert "I prefer window seats when I fly." in prompt and "1,200 EUR" in prompt
