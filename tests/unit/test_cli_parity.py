"""The CLI reports what the facade holds: each ``--json`` read equals the facade's answer.

Every command runs on a store seeded through the facade (two users, an edit, a forgotten
record, a dream); its JSON is then compared with the same read done in Python.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from tests.unit.dream.support import T0, seed

runner = CliRunner()


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("parity") / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        seed(memory, user="u1")
        seed(memory, user="u2", turns=[("s", "user", "Bob keeps bees in the garden")])
        memory.dream(user_id="u1")
        records = memory.get_all(user_id="u1", layer="semantic", limit=1000)
        memory.update(records[0].id, "I prefer CSV reports over PDF", user_id="u1")
        memory.forget(records[1].id, user_id="u1")
        seed(memory, user="u1", turns=[("s9", "user", "later note about bees")], start=T0 + timedelta(days=9))
    return path


def _json(store: Path, *args: str) -> Any:
    result = runner.invoke(app, [*args, "--path", str(store)], catch_exceptions=False, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _open(store: Path) -> DreamMemory:
    return DreamMemory(store, embedder=HashingEmbedder())


@pytest.mark.parametrize("status", ["active", "all", "deleted", "superseded", "archived"])
@pytest.mark.parametrize("layer", [None, "episodic", "semantic"])
def test_list_json_is_the_facades_page(store: Path, status: str, layer: str | None) -> None:
    args = ["list", "--user", "u1", "--status", status, "--limit", "7", "--json"]
    args += ["--layer", layer] if layer else []
    out = _json(store, *args)
    with _open(store) as memory:
        page = memory.get_all(user_id="u1", layer=layer, status=None if status == "all" else status, limit=7)
    assert out["records"] == [r.to_dict() for r in page]
    assert out["twins"] == page.twins and out["next_offset"] == page.next_offset


def test_paging_through_the_cli_visits_every_record_once(store: Path) -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        args = ["--status", "all", "--limit", "3", "--offset", str(offset), "--json"]
        out = _json(store, "list", "--user", "u1", *args)
        seen += [r["id"] for r in out["records"]]
        offset = out["next_offset"]
    with _open(store) as memory:
        everything = memory.get_all(user_id="u1", status=None, limit=1000)
    assert seen == [r.id for r in everything] and len(set(seen)) == len(seen)


def test_history_json_is_the_facades_history(store: Path) -> None:
    with _open(store) as memory:
        edited = [r for r in memory.get_all(user_id="u1", layer="semantic", limit=1000) if "CSV" in r.content]
        (record,) = edited
        expected = [r.to_dict() for r in memory.history(record.id, user_id="u1")]
    assert len(expected) > 1
    assert _json(store, "history", record.id[:10], "--user", "u1", "--json") == expected


@pytest.mark.parametrize("user", [None, "u1", "u2"])  # an unknown user is an error (test_rough_edges)
def test_stats_json_is_the_facades_stats(store: Path, user: str | None) -> None:
    out = _json(store, "stats", *(["--user", user] if user else []))
    with _open(store) as memory:
        assert out == json.loads(json.dumps(memory.stats(user_id=user)))


@pytest.mark.parametrize("query", ["Excel reports", "bees", "allergic", "who signs the contracts"])
def test_recall_json_is_the_facades_recall(store: Path, query: str) -> None:
    out = _json(store, "recall", query, "--user", "u1", "--k", "4", "--json")
    with _open(store) as memory:
        result = memory.recall(query, user_id="u1", k=4)
    assert [h["id"] for h in out] == result.ids
    assert [h["content"] for h in out] == [h.record.content for h in result]
    assert all(h["id"] for h in out) and len(out) <= 4


def test_dream_log_json_lists_the_facades_dreams(store: Path) -> None:
    args = ["dream", "log", "--user", "u1", "--path", str(store)]
    result = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    with _open(store) as memory:
        dreams = memory.dreams(user_id="u1")
    assert dreams and all(d.dream_id in result.output for d in dreams)
    assert "u2" not in result.output


def test_export_on_stdout_is_the_facades_export(store: Path) -> None:
    result = runner.invoke(app, ["export", "--user", "u1", "--path", str(store)])
    assert result.exit_code == 0, result.output
    with _open(store) as memory:
        expected = memory.export(user_id="u1").splitlines()
    got = result.output.splitlines()
    assert len(got) == len(expected) and got[1:] == expected[1:]  # the header holds the export time
    assert json.loads(got[0]).keys() == json.loads(expected[0]).keys()
