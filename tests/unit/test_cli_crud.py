"""The list, history, export, import and purge commands, through the CLI runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "cli-store"
    with DreamMemory(path, embedder=HashingEmbedder()) as m:
        m.add("I prefer Excel reports over PDF", user_id="u1", session_id="s1")
        m.add_many([{"content": f"note number {n}", "user_id": "u1"} for n in range(30)])
        m.add("not yours", user_id="u2")
    return path


def run(*args: str, code: int = 0, stdin: str | None = None) -> str:
    result = runner.invoke(app, list(args), input=stdin, catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result.output


def test_list_pages_and_marks_twins(store: Path) -> None:
    out = json.loads(run("list", "--user", "u1", "--path", str(store), "--json", "--limit", "25"))
    assert len(out["records"]) == 25 and out["next_offset"] == 25
    rest = json.loads(
        run("list", "--user", "u1", "-p", str(store), "--json", "--limit", "25", "--offset", "25")
    )
    assert len(rest["records"]) == 7 and rest["next_offset"] is None
    assert len(rest["twins"]) == 2  # the Excel turn and its fact name each other
    table = run("list", "--user", "u1", "--path", str(store), "--limit", "5")
    assert "next page: --offset 5" in table and "note" in table
    assert "not yours" not in run(
        "list", "--user", "u1", "--path", str(store), "--status", "all", "--limit", "99"
    )


def test_history_shows_an_edit(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as m:
        target = m.get_all(user_id="u1", layer="semantic")[0]
        m.update(target.id, "I prefer CSV reports over PDF", user_id="u1")
    chain = json.loads(run("history", target.id, "--user", "u1", "--path", str(store), "--json"))
    assert [c["content"] for c in chain] == [
        "I prefer Excel reports over PDF",
        "I prefer CSV reports over PDF",
    ]
    assert "superseded" in run("history", target.id, "--user", "u1", "--path", str(store))


def test_export_import_round_trip(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "u1.jsonl"
    assert "exported" in run("export", "--user", "u1", "--path", str(store), "--out", str(out))
    printed = run("export", "--user", "u1", "--path", str(store))
    assert printed == out.read_text(encoding="utf-8")
    other = tmp_path / "other-store"
    with DreamMemory(other, embedder=HashingEmbedder()):
        pass
    assert "imported 32 records (0 already there)" in run(
        "import", str(out), "--user", "u1", "--path", str(other)
    )
    assert run("export", "--user", "u1", "--path", str(other)) == printed
    assert "imported 0 records (32 already there)" in run("import", str(out), "-u", "u1", "-p", str(other))


def test_purge_asks_and_erases(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as m:
        target = m.get_all(user_id="u1", layer="semantic")[0].id
    assert "would erase 2 records" in run("purge", target, "--user", "u1", "--path", str(store), "--dry-run")
    run("purge", target, "--user", "u1", "--path", str(store), stdin="n\n", code=1)  # declined: aborted
    with DreamMemory(store, embedder=HashingEmbedder()) as m:
        assert m.get(target, user_id="u1")
    out = run("purge", target, "--user", "u1", "--path", str(store), stdin="y\n")
    assert "erased 2 records" in out and "file compacted: True" in out
    assert b"Excel" not in b"".join(p.read_bytes() for p in store.iterdir() if p.is_file())
    assert "erased 30 records" in run("purge", "--all", "--user", "u1", "--path", str(store), "--yes")
    assert "not yours" in run("list", "--user", "u2", "--path", str(store))


def error_of(*args: str) -> str:
    """The typed error a command raises (``main`` prints it as one ``error:`` line)."""
    result = runner.invoke(app, list(args))
    assert result.exit_code != 0 and result.exception is not None
    return type(result.exception).__name__


def test_bad_input_gives_typed_errors(store: Path, tmp_path: Path) -> None:
    assert error_of("purge", "--user", "u1", "--path", str(store)) == "ValidationError"
    assert error_of("purge", "x" * 32, "--all", "--user", "u1", "--path", str(store)) == "ValidationError"
    assert error_of("purge", "x" * 32, "--user", "u2", "--path", str(store), "--yes") == "NotFoundError"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n", encoding="utf-8")
    assert error_of("import", str(bad), "--user", "u1", "--path", str(store)) == "ValidationError"
    assert error_of("list", "--user", "u1", "--path", str(store), "--limit", "0") == "ValidationError"
    assert error_of("history", "nope", "--user", "u1", "--path", str(store)) == "NotFoundError"
