"""The keyword index's two columns: a memory's own words, and its session context.

A turn is matched on its own words (weight 1) and on the previous turn(s) of its
session (``RecallConfig.context_weight``), so an answer is found by its question's
words without outranking the turn that says them. Stores written before the context
column existed are migrated in place and keep answering.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import dreammem.stores.sqlite.connection as sqlite_module
from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import ConfigError
from dreammem.stores.migrations import MIGRATIONS
from dreammem.stores.sqlite import SQLiteRecordStore

SESSION = [
    "Where did you go hiking last weekend?",
    "Mount Tamalpais, the view over the bay was unreal.",
    "Did you take the dog along?",
]


def _memory(context_weight: float = 0.5, window: int = 1) -> DreamMemory:
    recall = RecallConfig(context_weight=context_weight, context_window_turns=window, paths=("keyword",))
    return DreamMemory(None, config=DreamMemConfig(recall=recall), embedder=HashingEmbedder())


def _add_session(memory: DreamMemory) -> list[str]:
    turns = [{"content": t, "user_id": "u1", "session_id": "s1"} for t in SESSION]
    return [r.id for r in memory.add_many(turns)]


def test_answer_is_found_through_its_questions_words_and_ranks_below_it() -> None:
    with _memory() as memory:
        ids = _add_session(memory)
        hits = memory.recall("hiking last weekend", user_id="u1", k=5).ids
    assert hits[:2] == [ids[0], ids[1]]  # the question itself first, then its answer


def test_context_is_only_the_previous_turn_with_a_window_of_one() -> None:
    with _memory() as memory:
        ids = _add_session(memory)
        hits = memory.recall("hiking", user_id="u1", k=5).ids
    assert ids[2] not in hits  # two turns later: hiking is outside its window


def test_without_a_window_context_words_find_nothing() -> None:
    with _memory(window=0) as memory:
        ids = _add_session(memory)
        hits = memory.recall("hiking last weekend", user_id="u1", k=5).ids
    assert hits == [ids[0]]


def test_own_words_outrank_the_same_words_in_context() -> None:
    with _memory() as memory:
        ids = _add_session(memory)
        scores = dict(memory.store.keyword_search("u1", ["tamalpais"], 5))
        rowids = memory.store.rowids("u1", ids)
    assert set(scores) == {rowids[ids[1]], rowids[ids[2]]}
    assert scores[rowids[ids[1]]] > scores[rowids[ids[2]]]


def test_embedding_is_the_turn_text_alone() -> None:
    with _memory() as memory:
        ids = _add_session(memory)
        hits = memory.recall(SESSION[1], user_id="u1", k=1, paths=["vector"])
    assert hits.ids == [ids[1]]
    assert hits[0].path_scores["vector"] == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize("bad", [-0.5, float("inf"), float("nan")])
def test_bad_context_weight_is_a_config_error(bad: float) -> None:
    with pytest.raises(ConfigError):
        SQLiteRecordStore(":memory:", context_weight=bad)
    with pytest.raises(ValueError):
        RecallConfig(context_weight=bad)


def test_negative_path_weight_is_rejected() -> None:
    with pytest.raises(ValueError):
        RecallConfig(path_weights={"vector": -1.0})


def test_store_of_schema_6_is_migrated_and_its_rows_still_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    monkeypatch.setattr(sqlite_module, "MIGRATIONS", MIGRATIONS[:6])
    old = SQLiteRecordStore(path)
    assert old.schema_version == 6
    old.execute(
        "INSERT INTO records (rowid, id, user_id, layer, kind, source, content, event_time, created_at, "
        "confidence, importance, priority, status, pinned) VALUES (7, 'r1', 'u1', 'episodic', 'turn', "
        "'user', 'Oolong is my favourite tea', '2024-01-01T00:00:00+00:00', '2024-01-01T00:00:00+00:00', "
        "1.0, 3, 1, 'active', 0)"
    )
    old.execute("INSERT INTO records_fts (rowid, terms) VALUES (7, 'oolong favourite tea')")
    old.close()
    monkeypatch.undo()
    store = SQLiteRecordStore(path)
    assert store.schema_version == len(MIGRATIONS)
    found = store.keyword_search("u1", ["oolong"], 5)
    assert [rowid for rowid, _ in found] == [7]
    assert found[0][1] > 0
    columns = [r[1] for r in store.fetchall("PRAGMA table_info(records_fts)")]
    assert columns == ["terms", "context", "scope"]
    store.close()
    assert np.isfinite(found[0][1])


def test_reindex_splits_text_written_into_one_column_again() -> None:
    with _memory() as memory:
        ids = _add_session(memory)
        rowids = memory.store.rowids("u1", ids)
        # what a store written before schema 7 holds: previous turn and turn in one column
        merged = "where did you go hiking last weekend mount tamalpais view bay unreal"
        memory.store.set_match_text(rowids[ids[1]], merged)
        sql = "SELECT terms, context FROM records_fts WHERE rowid = ?"
        before = memory.store.fetchone(sql, (rowids[ids[1]],))
        assert before is not None and "hiking" in before[0] and before[1] == ""
        report = memory.reindex()
        assert report["keyword_texts"] == 3
        assert memory.recall("hiking last weekend", user_id="u1", k=5).ids[:2] == [ids[0], ids[1]]
        row = memory.store.fetchone(sql, (rowids[ids[1]],))
    assert row is not None
    assert "hiking" not in row[0] and "hiking" in row[1]
