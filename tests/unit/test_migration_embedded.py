"""``migrate`` between two embedded stores: every record and dream, and the CLI over it.

The Neo4j round trip lives in tests/integration/test_migrate.py; these run on two
SQLite stores so the copy's own rules (skip what is there, refuse a model mismatch,
keep ``undo_dream`` working in the copy) are checked on every unit run.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import ConfigError, DreamMemory, Status
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem.migration import migrate
from tests.unit.dream.support import LONG_TERM_TURNS, T0, seed

runner = CliRunner()


def _source(path: Path) -> DreamMemory:
    memory = DreamMemory(path, embedder=HashingEmbedder())
    seed(memory, turns=LONG_TERM_TURNS)
    edited = memory.add("my locker code is 1234", user_id="u1")
    memory.update(edited.id, "my locker code is 4321", user_id="u1")
    memory.forget(memory.add("I used to live in Porto", user_id="u1").id, user_id="u1")
    memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
    memory.dream(user_id="u1", level=2, now=T0 + timedelta(days=2))  # a second-level dream log entry
    memory.add("still queued for the next dream", user_id="u1")
    memory.set_task_state({"goal": "renew the passport"}, user_id="u1", session_id="s1")
    memory.add("bob's own memory about chess", user_id="bob")
    return memory


def _state(memory: DreamMemory, user: str) -> dict[str, object]:
    store = memory.store
    return {
        "records": sorted((r.to_dict() for r in store.find(user, statuses=None)), key=lambda d: d["id"]),
        "queued": sorted(r.id for r in store.queued(user)),
        "task_states": store.task_states(user),
        "dreams": store.list_dreams(user, 100),
    }


def test_a_copy_between_embedded_stores_keeps_everything_and_a_rerun_adds_nothing(tmp_path: Path) -> None:
    with _source(tmp_path / "a") as source, DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as copy:
        before = {u: _state(source, u) for u in ("u1", "bob")}
        report = migrate(source, copy)
        assert report.users == 2
        assert report.records == sum(len(before[u]["records"]) for u in before)  # type: ignore[arg-type]
        assert report.dreams == 2 and report.task_states == 1
        assert {u: _state(copy, u) for u in before} == before

        again = migrate(source, copy)
        assert (again.records, again.dreams) == (0, 0)
        assert again.skipped == report.records
        assert {u: _state(copy, u) for u in before} == before
        for query, expected in (
            ("locker code", "4321"),
            ("who signs the contracts?", "Tom"),
            ("peanuts", "all"),
        ):
            # the hashing embedder ties every unrelated record: only the top hit is meaningful
            top = copy.recall(query, user_id="u1")[0]
            assert expected in top.record.content and top.id == source.recall(query, user_id="u1")[0].id


def test_the_copy_can_undo_a_dream_it_did_not_run(tmp_path: Path) -> None:
    with _source(tmp_path / "a") as source, DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as copy:
        migrate(source, copy, ["u1"])
        newest = copy.dreams(user_id="u1")[0]
        assert newest.level == 2
        copy.undo_dream(newest.dream_id, user_id="u1")
        assert copy.store.get_dream(newest.dream_id).status == "undone"  # type: ignore[union-attr]
        assert source.store.get_dream(newest.dream_id).status != "undone"  # type: ignore[union-attr]
        (merge,) = newest.merged
        assert source.get(merge.id, user_id="u1").status is Status.ARCHIVED
        assert copy.get(merge.id, user_id="u1").status is Status.ACTIVE  # the merge was put back


def test_only_the_users_asked_for_are_copied(tmp_path: Path) -> None:
    with _source(tmp_path / "a") as source, DreamMemory(tmp_path / "b", embedder=HashingEmbedder()) as copy:
        report = migrate(source, copy, ["bob"])
        assert (report.users, report.records, report.dreams) == (1, 1, 0)
        assert copy.store.users() == ["bob"]


def test_a_target_built_with_another_model_is_refused_before_anything_is_copied(tmp_path: Path) -> None:
    with (
        _source(tmp_path / "a") as source,
        DreamMemory(tmp_path / "b", embedder=HashingEmbedder(dim=64)) as copy,
    ):
        copy.add("the target's own memory", user_id="carol")
        with pytest.raises(ConfigError, match="embedded with"):
            migrate(source, copy)
        assert copy.store.users() == ["carol"]


def test_the_cli_migrates_one_user_between_paths(tmp_path: Path) -> None:
    _source(tmp_path / "a").close()
    result = runner.invoke(app, ["migrate", str(tmp_path / "a"), str(tmp_path / "b"), "--user", "bob"])
    assert result.exit_code == 0, result.output
    assert "migrated 1 users: 1 records (0 already there), 0 task states, 0 dreams" in result.output
    with DreamMemory(tmp_path / "b") as copy:
        assert copy.embedder.name == HashingEmbedder().name  # the source's model, not the default
        assert [r.content for r in copy.get_all(user_id="bob")] == ["bob's own memory about chess"]


def test_the_cli_refuses_a_source_path_without_a_store(tmp_path: Path) -> None:
    result = runner.invoke(app, ["migrate", str(tmp_path / "typo"), str(tmp_path / "b")])
    assert result.exit_code != 0
    assert isinstance(result.exception, ConfigError) and "no store at" in str(result.exception)
    assert not (tmp_path / "b").exists()
