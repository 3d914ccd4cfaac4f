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
    with DreamMemory(path, embedder=HashingEmbedder()) as m:  # fixes the model to the hashing embedder
        m.add("seed memory", user_id="u0")
    return path


def run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_add_recall_inspect_forget_stats_reindex(store: Path) -> None:
    out = run("add", "The boat is called Sea Otter", "--user", "u1", "--path", str(store))
    record_id = out.split()[1]
    recalled = json.loads(run("recall", "boat name", "--user", "u1", "--path", str(store), "--json"))
    assert recalled[0]["id"] == record_id and "keyword" in recalled[0]["paths"]
    assert "Sea Otter" in run("inspect", record_id, "--user", "u1", "--path", str(store))
    assert "deleted" in run("forget", record_id, "--user", "u1", "--path", str(store))
    stats = json.loads(run("stats", "--user", "u1", "--path", str(store)))
    assert stats["records"]["deleted"] == 1
    reindexed = json.loads(run("reindex", "--path", str(store)))
    assert reindexed["vectors"] == 1  # only u0's seed memory is still active


def test_cli_errors_are_clean(store: Path) -> None:
    result = runner.invoke(app, ["inspect", "nope", "--user", "u1", "--path", str(store)])
    assert result.exit_code != 0
    assert isinstance(result.exception, LookupError)
