"""The CLI forgives: short ids, --version, no silent new store on a typo, one error line."""

from __future__ import annotations

import io
import json
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

from dreammem import DreamMemory, __version__
from dreammem.cli import app, main
from dreammem.cli_progress import CountingEmbedder, progress_bar
from dreammem.embed import HashingEmbedder

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.add("The boat is called Sea Otter.", user_id="u1", session_id="s")
        memory.add("My budget is 5000 USD.", user_id="u1", session_id="s")
    return path


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    return result.output


def _main(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """Run the real entry point; return what it printed (it must exit with code 2)."""
    monkeypatch.setattr(sys, "argv", ["dreammem", *args])
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    return captured.out + captured.err


def _ids(store: Path, user: str = "u1") -> list[str]:
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        return [r.id for r in memory.get_all(user_id=user, layer="episodic")]


def test_version() -> None:
    assert _run("--version").strip() == f"dreammem {__version__}"


def test_inspect_and_forget_take_the_short_id_the_recall_table_shows(store: Path) -> None:
    table = _run("recall", "boat name", "--user", "u1", "--path", str(store))
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        (boat,) = [r.id for r in memory.get_all(user_id="u1") if "Sea Otter" in r.content]
    assert boat[:12] in table and boat not in table
    assert "Sea Otter" in _run("inspect", boat[:12], "--user", "u1", "--path", str(store))
    assert f"{boat} is now deleted" in _run("forget", boat[:8].upper(), "--user", "u1", "--path", str(store))


def test_unknown_and_foreign_prefixes_are_one_not_found_line(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    boat = _ids(store)[0]
    missing = next(p for p in ("0000", "ffff", "abcd") if not any(i.startswith(p) for i in _ids(store)))
    for given, user in ((missing, "u1"), (boat[:10], "someone-else"), ("not-an-id", "u1")):
        out = _main(monkeypatch, capsys, "inspect", given, "--user", user, "--path", str(store))
        assert out.startswith("error: NotFoundError: no memory") and len(out.strip().splitlines()) == 1


def test_ambiguous_and_too_short_prefixes_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "many"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        # 1,500 random 128-bit ids: two share their first 4 hex digits (p of none ~ 4e-8).
        records = memory.add_many([{"content": f"note {n}", "user_id": "u"} for n in range(1500)])
    counts = Counter(r.id[:4] for r in records)
    shared = next(prefix for prefix, n in counts.items() if n > 1)
    out = _main(monkeypatch, capsys, "forget", shared, "--user", "u", "--path", str(path))
    assert out.startswith("error: ValidationError:") and "ambiguous" in out
    assert len(out.strip().splitlines()) == 1
    out = _main(monkeypatch, capsys, "forget", shared[:3], "--user", "u", "--path", str(path))
    assert "too short" in out
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        assert memory.stats(user_id="u")["records"].get("deleted", 0) == 0  # nothing was forgotten


def test_dream_undo_takes_a_prefix(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        dream_id = memory.dream(user_id="u1").dream_id
    assert f"undid {dream_id}" in _run("dream", "undo", dream_id[:8], "--path", str(store))


def test_read_only_commands_refuse_a_path_without_a_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = tmp_path / "stroe"
    for args in (
        ["recall", "x", "--user", "u"],
        ["stats"],
        ["inspect", "abcd1234", "--user", "u"],
        ["forget", "abcd1234", "--user", "u"],
        ["reindex"],
        ["dream", "--user", "u"],
        ["dream", "log", "--user", "u"],
        ["dream", "undo", "abcd1234"],
    ):
        out = _main(monkeypatch, capsys, *args, "--path", str(typo))
        assert out.startswith(f"error: ConfigError: no store at {typo}"), args
        assert "dreammem add" in out and len(out.strip().splitlines()) == 1
    assert not typo.exists()  # nothing was created
    _run("add", "first memory", "--user", "u", "--path", str(typo))  # add creates the store
    assert "first memory" in _run("recall", "first", "--user", "u", "--path", str(typo))


def test_a_long_error_stays_one_line_on_a_narrow_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dreammem import cli  # noqa: PLC0415 - the module's console, to narrow it

    # A narrow console of its own: setting ``width`` on the shared one would stay fixed after the test.
    monkeypatch.setattr(cli, "console", Console(width=40))
    typo = tmp_path / ("a-long-directory-name-" * 4)
    out = _main(monkeypatch, capsys, "stats", "--path", str(typo))
    assert out.startswith("error: ConfigError: no store at") and len(out.strip().splitlines()) == 1


def test_a_file_or_an_unwritable_path_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("not a store")
    out = _main(monkeypatch, capsys, "add", "hello", "--user", "u", "--path", str(afile))
    assert out.startswith(f"error: ConfigError: {afile} is a file") and len(out.strip().splitlines()) == 1
    # Below a file, and in /sys (no one may create a directory there, root included: Linux CI).
    for unwritable in (afile / "store", Path("/sys/dreammem-test-store")):
        out = _main(monkeypatch, capsys, "add", "hello", "--user", "u", "--path", str(unwritable))
        assert out.startswith("error: ConfigError: cannot ") and str(unwritable) in out
        assert len(out.strip().splitlines()) == 1


def test_progress_bar_draws_on_a_terminal_only() -> None:
    drawn = {}
    for terminal in (True, False):
        out = io.StringIO()
        with progress_bar("re-embedding", 3, console=Console(file=out, force_terminal=terminal)) as advance:
            advance(3)
        drawn[terminal] = out.getvalue()
    assert "re-embedding" in drawn[True] and "3/3" in drawn[True]
    assert drawn[False] == ""


def test_counting_embedder_reports_chunks_and_keeps_the_vectors() -> None:
    inner = HashingEmbedder()
    seen: list[int] = []
    counting = CountingEmbedder(inner, seen.append, chunk=4)
    texts = [f"text number {n}" for n in range(10)]
    assert seen == [] and (counting.name, counting.dim) == (inner.name, inner.dim)
    np.testing.assert_array_equal(counting.embed_documents(texts), inner.embed_documents(texts))
    assert seen == [4, 4, 2]
    assert counting.embed_documents([]).shape == (0, inner.dim)


def test_reindex_with_a_model_re_embeds_every_active_record(store: Path) -> None:
    counts = json.loads(_run("reindex", "--path", str(store), "--model", "hashing-64"))
    assert counts["embedded"] == counts["vectors"] == 3  # two turns and the budget's semantic record
    assert json.loads(_run("stats", "--path", str(store)))["embedding_model"] == "hashing-64"
