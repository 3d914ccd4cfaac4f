"""Export and import split lines on ``\\n`` only: every other Unicode line break survives.

``str.splitlines()`` also breaks at VT, FF, U+001C-U+001E, U+0085, U+2028 and U+2029;
a memory holding one of them once made its own export unreadable (``line N: not
JSON``) through ``import_(str)``, ``import_(Path)`` and ``dreammem import FILE``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder

BREAKS = ["\u2028", "\u2029", "\u0085", "\x1c", "\x1d", "\x1e", "\x0b", "\x0c", "\r"]
"""Every character ``str.splitlines()`` breaks at, besides ``\\n`` itself."""


def test_the_table_is_every_line_break_of_splitlines() -> None:
    found = {chr(c) for c in range(0x110000) if len(f"a{chr(c)}b".splitlines()) == 2}
    assert found - {"\n"} == set(BREAKS)


def _source(tmp_path: Path, char: str) -> tuple[Path, str, str]:
    """A store holding one memory with ``char`` in its text and metadata; its export."""
    path = tmp_path / "src"
    text = f"before{char}after: the Quorvane crate"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.add(text, user_id="u1", session_id="s1", metadata={f"k{char}": f"v{char}"})
        memory.set_task_state({"goal": f"ship{char}it"}, user_id="u1", session_id="s1")
        exported = memory.export(user_id="u1")
    return path, text, exported


def _contents(path: Path) -> set[str]:
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        assert memory.task_state(user_id="u1", session_id="s1")["goal"].startswith("ship")
        return {r.content for r in memory.get_all(user_id="u1", status=None)}


@pytest.mark.parametrize("char", BREAKS, ids=[f"U+{ord(c):04X}" for c in BREAKS])
@pytest.mark.parametrize("how", ["str", "path", "lines", "cli", "raw-str", "raw-path"])
def test_an_export_holding_a_line_break_imports_back(tmp_path: Path, char: str, how: str) -> None:
    _, text, exported = _source(tmp_path, char)
    if how.startswith("raw"):  # the character unescaped, as another tool or a hand edit may write it
        exported = exported.replace(json.dumps(char)[1:-1], char)
        assert char in exported
    file = tmp_path / "u1.jsonl"
    file.write_text(exported, encoding="utf-8", newline="")
    target = tmp_path / "dst"
    if how == "cli":
        with DreamMemory(target, embedder=HashingEmbedder()):
            pass  # the store exists, with the test's embedder
        result = CliRunner().invoke(app, ["import", str(file), "--user", "u1", "--path", str(target)])
        assert result.exit_code == 0, result.output
        assert "imported 1 records" in result.output
    else:
        data: str | Path | list[str] = {
            "str": exported,
            "raw-str": exported,
            "raw-path": file,
            "path": file,
            "lines": exported.split("\n"),
        }[how]
        with DreamMemory(target, embedder=HashingEmbedder()) as memory:
            assert memory.import_(data, user_id="u1").imported == 1
    assert _contents(target) == {text}


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085"])
def test_an_export_line_holds_no_raw_line_break(tmp_path: Path, char: str) -> None:
    """Other readers (``splitlines``, JavaScript) see one line per record too."""
    _, _, exported = _source(tmp_path, char)
    assert len(exported.splitlines()) == 3
    assert char not in exported
