from __future__ import annotations

from datetime import timedelta

import pytest

from dreammem import DreamMemory, NotFoundError, Status, ValidationError
from tests.unit.dream.support import T0, active_contents, seed, snapshot


def _without_log(snap: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in snap.items() if k != "dreams"}


def test_undo_restores_the_state_before_the_dream(memory: DreamMemory) -> None:
    seed(memory)
    recall_before = memory.recall("Excel reports", user_id="u1", k=5).ids
    before = snapshot(memory)
    report = memory.dream(user_id="u1")
    assert snapshot(memory) != before
    result = memory.undo_dream(report.dream_id, user_id="u1")
    assert _without_log(snapshot(memory)) == _without_log(before)
    assert set(result.deleted) == {d.id for d in report.distilled}
    assert result.requeued == report.queued and result.skipped == ()
    assert memory.recall("Excel reports", user_id="u1", k=5).ids == recall_before
    assert memory.stats(user_id="u1")["vectors"] == len(memory.get_all(user_id="u1", limit=1000))
    assert memory.store.fetchone("SELECT status FROM dreams WHERE id = ?", (report.dream_id,))[0] == "undone"


def test_dream_again_after_undo_gives_the_same_outcome(memory: DreamMemory) -> None:
    seed(memory)
    first = memory.dream(user_id="u1")
    after_first = active_contents(memory)
    memory.undo_dream(first.dream_id, user_id="u1")
    second = memory.dream(user_id="u1")
    assert active_contents(memory) == after_first
    assert first.counts == second.counts


def test_undo_is_newest_first_and_only_once(memory: DreamMemory) -> None:
    seed(memory)
    first = memory.dream(user_id="u1")
    seed(
        memory,
        turns=[("s3", "user", "lol"), ("s3", "user", "we talked about the garden")],
        start=T0 + timedelta(1),
    )
    second = memory.dream(user_id="u1")
    with pytest.raises(ValidationError, match="later dreams first"):
        memory.undo_dream(first.dream_id, user_id="u1")
    memory.undo_dream(second.dream_id, user_id="u1")
    with pytest.raises(ValidationError, match="already undone"):
        memory.undo_dream(second.dream_id, user_id="u1")
    memory.undo_dream(first.dream_id, user_id="u1")
    assert memory.stats(user_id="u1")["queue"] == 21


def test_undo_is_scoped_to_the_owner(memory: DreamMemory) -> None:
    seed(memory, user="u1")
    report = memory.dream(user_id="u1")
    with pytest.raises(NotFoundError):
        memory.undo_dream(report.dream_id, user_id="u2")
    with pytest.raises(NotFoundError):
        memory.undo_dream("no-such-dream", user_id="u1")


def test_dry_runs_are_not_undoable(memory: DreamMemory) -> None:
    seed(memory)
    dry = memory.dream(user_id="u1", dry_run=True)
    with pytest.raises(NotFoundError):
        memory.undo_dream(dry.dream_id, user_id="u1")


def test_later_writes_keep_winning_after_undo(memory: DreamMemory) -> None:
    seed(memory, turns=[("s1", "user", "I prefer Excel reports over PDF")] * 3)
    report = memory.dream(user_id="u1")
    seed(memory, turns=[("s2", "user", "Actually, I now prefer CSV reports")], start=T0 + timedelta(days=1))
    memory.undo_dream(report.dream_id, user_id="u1")
    active = [
        r.content for r in memory.get_all(user_id="u1", layer="semantic") if r.slot == "user/report format"
    ]
    assert active == ["Actually, I now prefer CSV reports"]


CSV = "I prefer CSV reports over PDF"


@pytest.mark.parametrize(
    "first",
    [
        ["I prefer Excel reports over PDF"] * 2,  # the dream writes a pattern over both
        ["I prefer Word reports over PDF", "I prefer Excel reports over PDF"],  # it migrates a turn
    ],
)
def test_the_turns_a_dream_archived_come_back_superseded_when_a_later_write_won(
    memory: DreamMemory, first: list[str]
) -> None:
    """Found by tests/unit/dream/test_dream_undo_properties.py: the turn came back active."""
    seed(memory, turns=[("s1", "user", text) for text in first])
    report = memory.dream(user_id="u1")
    seed(memory, turns=[("s2", "user", CSV)], start=T0 + timedelta(days=1))
    result = memory.undo_dream(report.dream_id, user_id="u1")
    active = sorted((r.layer.value, r.content) for r in memory.get_all(user_id="u1"))
    assert active == [("episodic", CSV), ("semantic", CSV)]
    for record_id in result.restored:
        assert memory.get(record_id, user_id="u1").status is Status.SUPERSEDED
    hits = memory.recall("I prefer reports over PDF", user_id="u1", k=5).hits
    assert {h.record.content for h in hits if not h.outdated_by} == {CSV}


def test_records_changed_after_the_dream_are_left_alone(memory: DreamMemory) -> None:
    seed(memory)
    report = memory.dream(user_id="u1")
    kept = report.kept[0]
    archived = report.archived[0].id
    memory.forget(kept, user_id="u1")
    result = memory.undo_dream(report.dream_id, user_id="u1")
    assert memory.get(kept, user_id="u1").status is Status.DELETED
    assert kept in result.skipped
    assert memory.get(archived, user_id="u1").status is Status.ACTIVE


def _dangling(memory: DreamMemory) -> list[str]:
    records = {r.id: r for r in memory.get_all(user_id="u1", status=None, limit=1000)}
    return [r.id for r in records.values() if r.superseded_by is not None and r.superseded_by not in records]


def test_an_edit_of_a_record_the_dream_wrote_goes_with_it(memory: DreamMemory) -> None:
    seed(memory, turns=[("s1", "user", "I prefer Excel reports over PDF")] * 3)
    report = memory.dream(user_id="u1")
    (pattern,) = [d.id for d in report.distilled if d.kind == "pattern"]
    memory.update(pattern, "I prefer Excel reports, landscape, over PDF", user_id="u1")
    result = memory.undo_dream(report.dream_id, user_id="u1")
    assert _dangling(memory) == []
    assert pattern in result.deleted and len(result.deleted) == 2  # the pattern and its earlier text
    assert all("landscape" not in r.content for r in memory.get_all(user_id="u1", status=None, limit=1000))
    active = [r for r in memory.get_all(user_id="u1", layer="semantic") if r.slot == "user/report format"]
    assert [r.content for r in active] == ["I prefer Excel reports over PDF"]


def test_a_value_written_later_for_an_earlier_time_is_resolved_again(memory: DreamMemory) -> None:
    seed(memory, turns=[("s1", "user", "I prefer Excel reports over PDF")] * 3, start=T0 + timedelta(days=1))
    report = memory.dream(user_id="u1")
    seed(memory, turns=[("s0", "user", "I prefer Word reports over PDF")], start=T0)  # backfilled, older
    word = [r for r in memory.get_all(user_id="u1", status=None, limit=1000) if "Word" in r.content]
    assert word and all(r.status is Status.SUPERSEDED for r in word)  # at once, by the dream's pattern
    result = memory.undo_dream(report.dream_id, user_id="u1")
    assert _dangling(memory) == []
    assert {r.id for r in word} <= set(result.restored)  # current again, then superseded by the newer value
    records = {r.id: r for r in memory.get_all(user_id="u1", status=None, limit=1000)}
    for old in word:
        now = records[old.id]
        assert now.status is Status.SUPERSEDED and now.superseded_by is not None
        assert records[now.superseded_by].content.startswith("I prefer Excel")
    active = [r for r in memory.get_all(user_id="u1", layer="semantic") if r.slot == "user/report format"]
    assert [r.content for r in active] == ["I prefer Excel reports over PDF"]
