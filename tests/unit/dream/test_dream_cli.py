from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory, load_config
from dreammem.cli import app
from tests.unit.dream.support import seed, snapshot

runner = CliRunner()


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, Path]:
    config = tmp_path / "config.toml"
    config.write_text('[embedding]\nmodel = "hashing"\n')
    path = tmp_path / "store"
    with DreamMemory(path, config=load_config(config)) as memory:
        seed(memory, user="alice")
    return path, config


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_dry_run_prints_the_report_and_writes_nothing(store: tuple[Path, Path]) -> None:
    path, config = store
    with DreamMemory(path, config=load_config(config)) as memory:
        before = snapshot(memory)
    out = _run("dream", "--user", "alice", "--dry-run", "-p", str(path), "--config", str(config))
    assert "DRY RUN" in out and "new pattern" in out and "archived" in out
    with DreamMemory(path, config=load_config(config)) as memory:
        assert snapshot(memory) == before


def test_dream_log_and_undo(store: tuple[Path, Path]) -> None:
    path, config = store
    out = _run("dream", "--user", "alice", "--json", "-p", str(path), "--config", str(config))
    report = json.loads(out)
    assert report["counts"]["queued"] == 19 and not report["dry_run"]
    log = _run("dream", "log", "--user", "alice", "-p", str(path), "--config", str(config))
    assert report["dream_id"][:8] in log
    undone = _run("dream", "undo", report["dream_id"], "-p", str(path), "--config", str(config))
    assert "undid" in undone and "19 queued again" in undone
    with DreamMemory(path, config=load_config(config)) as memory:
        assert memory.stats(user_id="alice")["queue"] == 19


def test_dream_without_user_is_an_error(store: tuple[Path, Path]) -> None:
    path, config = store
    result = runner.invoke(app, ["dream", "-p", str(path), "--config", str(config)])
    assert result.exit_code != 0
    assert "--user" in result.output
