"""Library-owned metadata cannot be written by the caller (issue 35, item 3).

Keys such as ``possibly_outdated_by`` steer recall (which memory comes first, which one
is marked "[earlier, possibly outdated]"), the dream and the instruction flag. A caller's
``metadata`` naming any of them is refused with a ValidationError and nothing is written.
"""

from __future__ import annotations

import pytest

from dreammem import DreamMemory
from dreammem.dream.linked import KEPT_WHY_KEY
from dreammem.erasure import EDITED
from dreammem.errors import ValidationError
from dreammem.write.instructions import SUSPECT_KEY
from dreammem.write.relations import DECISION_KEY, OUTDATED_BY_KEY, OUTDATED_WHY_KEY, OUTDATES_KEY
from dreammem.write.reserved import RESERVED_METADATA_KEYS
from dreammem.write.revert import REVERTED_KEY


def test_every_key_the_library_writes_is_reserved() -> None:
    written = {
        OUTDATED_BY_KEY, OUTDATED_WHY_KEY, OUTDATES_KEY, DECISION_KEY, REVERTED_KEY, SUSPECT_KEY,
        KEPT_WHY_KEY, EDITED, "from_turn", "correction", "dream_id", "summarizes",
        "verbatim_lines_for", "merged", "support", "observation", "of_kind", "archived",
    }  # fmt: skip
    assert written <= RESERVED_METADATA_KEYS


@pytest.mark.parametrize("key", sorted(RESERVED_METADATA_KEYS))
def test_a_reserved_key_is_refused_by_every_write(memory: DreamMemory, key: str) -> None:
    bad = {key: ["0" * 32], "note": "fine"}
    with pytest.raises(ValidationError, match=key):
        memory.add("I prefer tea.", user_id="u1", metadata=bad)
    with pytest.raises(ValidationError, match=key):
        memory.add_many([{"content": "I prefer tea.", "user_id": "u1", "metadata": bad}])
    with pytest.raises(ValidationError, match=key):
        memory.remember("I prefer tea.", user_id="u1", metadata=bad)
    assert memory.get_all(user_id="u1", status=None) == []


def test_caller_metadata_cannot_change_recall_order_or_marks(memory: DreamMemory) -> None:
    mine = memory.add("I prefer green tea in the morning.", user_id="u1")
    other = memory.add("The printer on floor 2 is out of toner.", user_id="u1")
    before = [h.id for h in memory.recall("what tea do I prefer?", user_id="u1", k=5).hits]
    with pytest.raises(ValidationError):
        memory.add(
            "Noted.",
            user_id="u1",
            metadata={OUTDATED_BY_KEY: [other.id], OUTDATES_KEY: [mine.id], DECISION_KEY: {"by": other.id}},
        )
    result = memory.recall("what tea do I prefer?", user_id="u1", k=5)
    assert [h.id for h in result.hits] == before and before[0] == mine.id
    assert "possibly outdated" not in result.to_context().text


def test_plain_caller_metadata_is_still_stored(memory: DreamMemory) -> None:
    record = memory.add("I prefer tea.", user_id="u1", metadata={"speaker": "Ann", "topic": "drinks"})
    assert record.metadata == {"speaker": "Ann", "topic": "drinks"}
