from __future__ import annotations

from datetime import timedelta

import numpy as np

from dreammem import DreamMemory, Status
from dreammem.dream.second_level import find_duplicates
from dreammem.embed import HashingEmbedder
from dreammem.types import MemoryRecord
from tests.unit.dream.support import LONG_TERM_TURNS, T0, seed, snapshot


def test_duplicates_need_same_text_or_close_vectors_with_the_same_tokens() -> None:
    records = [
        MemoryRecord(user_id="u", content=t)
        for t in ("Buy oat milk!", "buy oat milk", "Budget is 5,000 USD", "Budget is 6,000 USD", "the sky")
    ]
    vectors = HashingEmbedder().embed_documents([r.content for r in records])
    groups = find_duplicates(records, vectors, 0.5)
    assert [sorted(r.content for r in g) for g in groups] == [["Buy oat milk!", "buy oat milk"]]
    assert find_duplicates(records, np.eye(5, dtype=np.float32), 0.99) == groups


def _long_term(memory: DreamMemory) -> None:
    seed(memory, turns=LONG_TERM_TURNS)
    memory.dream(user_id="u1", now=T0 + timedelta(hours=1))


def test_second_level_archives_unused_low_importance_and_merges_duplicates(memory: DreamMemory) -> None:
    _long_term(memory)
    summaries = [r for r in memory.get_all(user_id="u1") if r.kind.value == "summary"]
    assert len(summaries) == 3  # one per session, two with the same words
    report = memory.dream(user_id="u1", level=2, now=T0 + timedelta(days=2))
    assert report.level == 2
    (merge,) = report.merged
    keeper = memory.get(merge.to, user_id="u1")  # type: ignore[arg-type]
    assert keeper.system["merged"] == [merge.id]
    assert memory.get(merge.id, user_id="u1").status is Status.ARCHIVED
    # much later: the low-importance summary has not been used for a month
    later = memory.dream(user_id="u1", level=2, now=T0 + timedelta(days=60))
    archived = {c.id: c.reason for c in later.archived}
    assert archived[keeper.id] == "unused"
    assert set(archived.values()) == {"unused"}
    active = {r.content for r in memory.get_all(user_id="u1")}
    assert "Remember: I am allergic to peanuts" in active  # pinned: never archived
    assert "I prefer Excel reports over PDF" in active


def test_expired_records_are_archived(memory: DreamMemory) -> None:
    memory.add(
        "Coupon code SPRING25 is valid",
        user_id="u1",
        metadata={"expires_at": (T0 + timedelta(days=1)).isoformat()},
        event_time=T0,
    )
    memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
    report = memory.dream(user_id="u1", level=2, now=T0 + timedelta(days=2))
    assert [c.reason for c in report.archived] == ["expired"]


def test_second_level_dry_run_and_undo(memory: DreamMemory) -> None:
    _long_term(memory)
    before = snapshot(memory)
    dry = memory.dream(user_id="u1", level=2, dry_run=True, now=T0 + timedelta(days=60))
    assert snapshot(memory) == before
    real = memory.dream(user_id="u1", level=2, now=T0 + timedelta(days=60))
    assert dry.counts == real.counts
    assert snapshot(memory) != before
    memory.undo_dream(real.dream_id, user_id="u1")
    after = snapshot(memory)
    assert after["records"] == before["records"]
