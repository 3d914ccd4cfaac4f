"""The possibly-outdated mark: set, read, idempotent, removed again."""

from __future__ import annotations

from dreammem.types import MemoryRecord
from dreammem.write.relations import (
    OUTDATED_BY_KEY,
    OUTDATED_WHY_KEY,
    OUTDATES_KEY,
    mark_possibly_outdated,
    note_possibly_outdates,
    possibly_outdated_by,
    possibly_outdates,
    unmark_possibly_outdated,
)


def test_mark_read_and_unmark() -> None:
    old = MemoryRecord(user_id="u1", content="I prefer email", metadata={"keep": 1})
    assert possibly_outdated_by(old) == ()
    marked = mark_possibly_outdated(old, "n1", {"rule": "r", "reason": "why"})
    assert possibly_outdated_by(marked) == ("n1",)
    assert mark_possibly_outdated(marked, "n1", {"rule": "r"}) is marked
    twice = mark_possibly_outdated(marked, "n2", {"rule": "s"})
    assert possibly_outdated_by(twice) == ("n1", "n2")
    assert twice.system[OUTDATED_WHY_KEY]["n2"] == {"rule": "s"}
    one = unmark_possibly_outdated(twice, ["n1"])
    assert possibly_outdated_by(one) == ("n2",) and set(one.system[OUTDATED_WHY_KEY]) == {"n2"}
    none = unmark_possibly_outdated(one, ["n2"])
    assert OUTDATED_BY_KEY not in none.system and OUTDATED_WHY_KEY not in none.system
    assert none.metadata["keep"] == 1


def test_junk_in_the_field_reads_as_no_mark() -> None:
    record = MemoryRecord(user_id="u1", content="x", system={OUTDATED_BY_KEY: "n1"})
    assert possibly_outdated_by(record) == ()
    mixed = MemoryRecord(user_id="u1", content="x", system={OUTDATED_BY_KEY: ["n1", 3, None]})
    assert possibly_outdated_by(mixed) == ("n1",)


def test_the_newer_record_notes_what_it_marked() -> None:
    newer = MemoryRecord(user_id="u1", content="Text me instead", system={OUTDATES_KEY: ["o1", 7]})
    assert possibly_outdates(newer) == ("o1",)  # a non-id entry is ignored
    noted = note_possibly_outdates(newer, ["o2", "o1"])
    assert possibly_outdates(noted) == ("o1", "o2")
    assert note_possibly_outdates(noted, ["o2"]) is noted
    assert possibly_outdates(MemoryRecord(user_id="u1", content="x", system={OUTDATES_KEY: "o1"})) == ()
