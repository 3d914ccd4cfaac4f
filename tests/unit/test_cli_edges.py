"""CLI edges: reports with degraded notes, undo that skips, bad outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory, NotFoundError, ValidationError
from dreammem.cli import app
from dreammem.cli_dream import print_report
from dreammem.cli_progress import CountingEmbedder
from dreammem.embed import HashingEmbedder
from tests.unit.dream.support import MalformedLLM, seed

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        seed(memory, user="alice")
        seed(memory, user="bob", turns=[("s", "user", "Bob keeps bees in the garden")])
    return path


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_a_dream_prefix_of_another_user_is_not_found_when_a_user_is_given(store: Path) -> None:
    report = json.loads(_run("dream", "--user", "bob", "--json", "-p", str(store)))
    result = runner.invoke(
        app, ["dream", "undo", report["dream_id"][:8], "--user", "alice", "-p", str(store)]
    )
    assert isinstance(result.exception, NotFoundError)
    assert "for user 'alice'" in str(result.exception)
    assert f"undid {report['dream_id']}" in _run("dream", "undo", report["dream_id"][:8], "-p", str(store))


def test_undo_lists_the_records_it_left_alone(store: Path) -> None:
    report = json.loads(_run("dream", "--user", "alice", "--json", "-p", str(store)))
    kept = report["kept"][0]
    with DreamMemory(store) as memory:
        memory.forget(kept, user_id="alice")
    out = _run("dream", "undo", report["dream_id"], "--user", "alice", "-p", str(store))
    assert "left as they are (changed since the dream)" in out and kept in out


def test_the_dream_log_lists_newest_first_with_counts(store: Path) -> None:
    first = json.loads(_run("dream", "--user", "alice", "--json", "-p", str(store)))
    second = json.loads(_run("dream", "--user", "alice", "--level", "2", "--json", "-p", str(store)))
    log = _run("dream", "log", "--user", "alice", "-p", str(store))
    assert log.index(second["dream_id"]) < log.index(first["dream_id"])
    assert "bob" not in log
    newest = _run("dream", "log", "--user", "alice", "--limit", "1", "-p", str(store))
    assert second["dream_id"] in newest and first["dream_id"] not in newest


def test_a_report_prints_its_degraded_notes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), llm=MalformedLLM()) as memory:
        seed(memory)
        report = memory.dream(user_id="u1")
    assert report.degraded
    print_report(report)
    out = capsys.readouterr().out
    assert f"dream {report.dream_id}" in out and "degraded:" in out
    assert report.degraded[0].split()[0] in out


def test_export_to_a_path_that_cannot_be_written_is_a_validation_error(store: Path, tmp_path: Path) -> None:
    target = tmp_path / "no-such-folder" / "out.jsonl"
    result = runner.invoke(app, ["export", "--user", "alice", "-p", str(store), "--out", str(target)])
    assert isinstance(result.exception, ValidationError)
    assert "cannot write" in str(result.exception) and not target.exists()


def test_purge_needs_exactly_one_of_an_id_and_all(store: Path) -> None:
    for args in (["purge", "--user", "alice"], ["purge", "abcd1234", "--all", "--user", "alice"]):
        result = runner.invoke(app, [*args, "-p", str(store), "--yes"])
        assert isinstance(result.exception, ValidationError), args
    with DreamMemory(store) as memory:
        assert memory.get_all(user_id="alice")  # nothing was erased


def test_the_counting_embedder_does_not_count_queries() -> None:
    seen: list[int] = []
    inner = HashingEmbedder(dim=16)
    counting = CountingEmbedder(inner, seen.append)
    assert np.array_equal(counting.embed_query("a query"), inner.embed_query("a query"))
    assert seen == []
    counting.embed_documents(["one", "two", "three"])
    assert sum(seen) == 3
