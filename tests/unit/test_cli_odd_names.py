"""The CLI with odd store paths and user ids: spaces, quotes, CJK, emoji, LIKE wildcards, dots."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder

runner = CliRunner()
USERS = ["用户一", "emoji🧠", "o'brien", 'say "hi"', "a b", "x" * 200, "user/../etc", "%_*", "u1", "U1"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("odd") / "my store ünï 店 'q\""
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        for n, user in enumerate(USERS):
            memory.add(f"The boat number {n} is called Sea Otter", user_id=user, session_id="s")
    return path


def _ok(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("user", USERS)
def test_each_user_sees_exactly_their_own_memory(store: Path, user: str) -> None:
    n = USERS.index(user)
    hits = json.loads(_ok("recall", "boat Sea Otter", "--user", user, "--path", str(store), "--json"))
    assert [h["content"] for h in hits] == [f"The boat number {n} is called Sea Otter"]
    listed = json.loads(_ok("list", "--user", user, "--path", str(store), "--json"))
    assert [r["user_id"] for r in listed["records"]] == [user]
    lines = _ok("export", "--user", user, "--path", str(store)).splitlines()
    records = [json.loads(line)["record"] for line in lines[1:] if "record" in json.loads(line)]
    assert [r["user_id"] for r in records] == [user]


def test_an_added_memory_lands_in_the_odd_path_and_nowhere_else(store: Path) -> None:
    out = _ok("add", "a kayak named Puffin", "--user", "emoji🧠", "--path", str(store))
    record_id = out.split()[1]
    assert "Puffin" in _ok("inspect", record_id[:8], "--user", "emoji🧠", "--path", str(store))
    stats = json.loads(_ok("stats", "--path", str(store)))
    assert stats["records"]["active"] >= len(USERS) + 1
    files = {p.name for p in store.iterdir()}
    allowed = {"dreammem.db", "dreammem.db-wal", "dreammem.db-shm", "vectors.faiss"}
    assert {"dreammem.db", "vectors.faiss"} <= files <= allowed
    assert [p.name for p in store.parent.iterdir()] == [store.name]  # no stray file beside the odd path
