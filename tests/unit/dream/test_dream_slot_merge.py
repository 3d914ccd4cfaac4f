"""An import merges two memories as they were (two active values of a slot); the next dream picks one.

Import keeps every record's state (an exact round trip), so a store that already holds
a value of a slot can end up with two active values after importing another store's
memory. The dream's slot conflicts (:func:`dreammem.dream.conflicts.resolve_slot_conflicts`)
settle it by the one supersede rule: the newest event wins, whichever store it came from.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory, Layer, Status
from dreammem.embed import HashingEmbedder
from tests.unit.dream.support import T0, seed

SLOT = "user/report format"
EXCEL = "I prefer Excel reports over PDF"
WORD = "I prefer Word reports over PDF"


def _slot_values(memory: DreamMemory, status: Status = Status.ACTIVE) -> list[str]:
    records = memory.get_all(user_id="u1", layer="semantic", status=status.value, limit=100)
    return sorted(r.content for r in records if r.slot == SLOT)


def _merged(tmp_path: Path, *, imported_days: int, local_days: int) -> DreamMemory:
    with DreamMemory(tmp_path / "other", embedder=HashingEmbedder()) as other:
        seed(other, turns=[("s1", "user", EXCEL)] * 3, start=T0 + timedelta(days=imported_days))
        exported = other.export(user_id="u1")
    memory = DreamMemory(tmp_path / "here", embedder=HashingEmbedder())
    seed(memory, turns=[("s9", "user", WORD)], start=T0 + timedelta(days=local_days))
    memory.dream(user_id="u1")  # the local value is long-term memory already
    memory.import_(exported, user_id="u1")
    return memory


@pytest.mark.parametrize(
    ("imported_days", "local_days", "winner"),
    [(5, 0, EXCEL), (0, 5, WORD)],
    ids=["the-import-is-newer", "the-local-value-is-newer"],
)
def test_the_dream_after_an_import_leaves_one_active_value_the_newest(
    tmp_path: Path, imported_days: int, local_days: int, winner: str
) -> None:
    with _merged(tmp_path, imported_days=imported_days, local_days=local_days) as memory:
        assert set(_slot_values(memory)) == {EXCEL, WORD}  # merged as they were
        report = memory.dream(user_id="u1")
        assert report.queued == 3
        active = memory.get_all(user_id="u1", layer="semantic", limit=100)
        assert {r.content for r in active if r.slot == SLOT} == {winner}
        loser = WORD if winner == EXCEL else EXCEL
        assert loser in _slot_values(memory, Status.SUPERSEDED)
        # the loser's turns say the same outdated thing: out of recall too
        turns = memory.get_all(user_id="u1", layer="episodic", limit=100)
        assert all(t.content != loser for t in turns), [(t.content, t.status) for t in turns]
        hits = memory.recall("which reports do I prefer over PDF", user_id="u1", k=10).hits
        assert {h.record.content for h in hits if not h.outdated_by} <= {winner}


def test_the_superseded_value_points_at_the_winner_and_history_holds_both(tmp_path: Path) -> None:
    with _merged(tmp_path, imported_days=5, local_days=0) as memory:
        memory.dream(user_id="u1")
        (word,) = [
            r
            for r in memory.get_all(user_id="u1", layer="semantic", status="superseded", limit=100)
            if r.content == WORD
        ]
        assert word.superseded_by is not None and word.valid_to is not None
        winner = memory.get(word.superseded_by, user_id="u1")
        assert winner.is_active and winner.layer is Layer.SEMANTIC and winner.slot == SLOT
        assert word.valid_to == winner.event_time >= T0 + timedelta(days=5)
        assert WORD in [r.content for r in memory.history(winner.id, user_id="u1")]
