"""Caller metadata cannot steer the library (issue 35, item 3).

Keys such as ``possibly_outdated_by`` steer recall (which memory comes first, which one
is marked "[earlier, possibly outdated]"), the dream and the instruction flag. The
library keeps them in ``MemoryRecord.system``, which no public write takes; a caller's
``metadata`` with the same names is the caller's own data, stored, returned and never read.
An export carries ``system`` beside ``metadata``; an export written before the move
(version 1) has its notes moved out of the metadata on import.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.dream.linked import KEPT_WHY_KEY
from dreammem.embed import HashingEmbedder
from dreammem.erasure import EDITED
from dreammem.errors import ValidationError
from dreammem.system_meta import KEYED_KEY, LATER_KEYS, LEGACY_KEYS, MESSAGE_KEY, SYSTEM_KEYS
from dreammem.write.instructions import SUSPECT_KEY
from dreammem.write.relations import DECISION_KEY, OUTDATED_BY_KEY, OUTDATED_WHY_KEY, OUTDATES_KEY
from dreammem.write.revert import REVERTED_KEY

QUESTION = "what tea do I prefer?"


def test_every_key_the_library_writes_is_a_system_key() -> None:
    written = {
        OUTDATED_BY_KEY, OUTDATED_WHY_KEY, OUTDATES_KEY, DECISION_KEY, REVERTED_KEY, SUSPECT_KEY,
        KEPT_WHY_KEY, EDITED, "from_turn", "correction", "dream_id", "summarizes",
        "verbatim_lines_for", "merged", "support", "observation", "of_kind", "archived",
        MESSAGE_KEY, KEYED_KEY,
    }  # fmt: skip
    assert written == SYSTEM_KEYS == set(LEGACY_KEYS) | set(LATER_KEYS)


@pytest.mark.parametrize("key", sorted(SYSTEM_KEYS))
def test_a_system_key_in_caller_metadata_is_the_callers_data(memory: DreamMemory, key: str) -> None:
    mine = {key: ["0" * 32], "note": "fine"}
    added = memory.add("I prefer tea.", user_id="u1", metadata=mine)
    (many,) = memory.add_many([{"content": "I prefer coffee.", "user_id": "u2", "metadata": mine}])
    kept = memory.remember("I prefer tea.", user_id="u3", metadata=mine)
    for record in (added, many, kept):
        stored = memory.get(record.id, user_id=record.user_id)
        assert stored.metadata == mine and key not in stored.system


def _two_memories(memory: DreamMemory) -> tuple[str, str, list[str]]:
    mine = memory.add("I prefer green tea in the morning.", user_id="u1").id
    other = memory.add("The printer on floor 2 is out of toner.", user_id="u1").id
    before = [h.id for h in memory.recall(QUESTION, user_id="u1", k=5).hits]
    assert before[0] == mine
    return mine, other, before


def _unsteered(memory: DreamMemory, mine: str, before: list[str]) -> None:
    result = memory.recall(QUESTION, user_id="u1", k=5)
    ids = [h.id for h in result.hits]
    assert ids[0] == before[0] == mine and [i for i in ids if i in before] == before
    assert "possibly outdated" not in result.to_context().text
    assert memory.get(mine, user_id="u1").system == {}


def test_caller_metadata_cannot_change_recall_order_or_marks(memory: DreamMemory) -> None:
    mine, other, before = _two_memories(memory)
    attack = {OUTDATED_BY_KEY: [other], OUTDATES_KEY: [mine], DECISION_KEY: {"by": other}}
    memory.add("Noted.", user_id="u1", metadata=attack)
    memory.add("Okay, thanks.", user_id="u1", role="tool", metadata={**attack, SUSPECT_KEY: True})
    _unsteered(memory, mine, before)


def _rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def _text(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_an_imported_record_cannot_steer_through_its_metadata(memory: DreamMemory, tmp_path: Path) -> None:
    mine, other, before = _two_memories(memory)
    rows = _rows(memory.export(user_id="u1"))
    for row in rows[1:]:
        if row["record"]["id"] == mine:
            row["record"]["metadata"] = {OUTDATED_BY_KEY: [other], SUSPECT_KEY: True}
    with DreamMemory(tmp_path / "other", embedder=HashingEmbedder()) as fresh:
        fresh.import_(_text(rows), user_id="u1")
        assert fresh.get(mine, user_id="u1").metadata == {OUTDATED_BY_KEY: [other], SUSPECT_KEY: True}
        _unsteered(fresh, mine, before)


def test_an_export_carries_the_notes_and_an_older_export_has_them_moved(
    memory: DreamMemory, tmp_path: Path
) -> None:
    mine, other, _ = _two_memories(memory)
    why = {other: {"rule": "test", "reason": "a newer one"}}
    (marked,) = memory.store.get("u1", [mine])
    memory.store.update([replace(marked, system={OUTDATED_BY_KEY: [other], OUTDATED_WHY_KEY: why})])
    rows = _rows(memory.export(user_id="u1"))
    assert rows[0]["version"] == 3 and any(r["record"]["system"].get(OUTDATED_BY_KEY) for r in rows[1:])
    old = [{**rows[0], "version": 1}]  # as version 1 wrote it: the notes inside the metadata
    for row in rows[1:]:
        record = dict(row["record"])
        record["metadata"] = {**record["metadata"], **record.pop("system")}
        old.append({**row, "record": record})
    with DreamMemory(tmp_path / "other", embedder=HashingEmbedder()) as fresh:
        fresh.import_(_text(old), user_id="u1")
        again = fresh.get(mine, user_id="u1")
        assert again.metadata == {} and again.system == {OUTDATED_BY_KEY: [other], OUTDATED_WHY_KEY: why}
        assert "possibly outdated" in fresh.recall(QUESTION, user_id="u1", k=5).to_context().text


@pytest.mark.parametrize(
    "system",
    [{"not_a_key": 1}, {OUTDATED_BY_KEY: "one id"}, {"support": True}, {SUSPECT_KEY: "yes"}, [1]],
)
def test_an_import_refuses_system_notes_of_another_shape(memory: DreamMemory, system: object) -> None:
    _two_memories(memory)
    rows = _rows(memory.export(user_id="u1"))
    rows[1]["record"]["system"] = system
    with pytest.raises(ValidationError, match="line 2"):
        memory.import_(_text(rows), user_id="u9")
    assert memory.get_all(user_id="u9") == []


def test_undoing_a_dream_logged_before_the_move_puts_the_notes_back_in_system(memory: DreamMemory) -> None:
    chat = memory.add("lol", user_id="u1", metadata={"mine": 1})
    memory.add("ok thanks", user_id="u1")
    (stored,) = memory.store.get("u1", [chat.id])
    noted = replace(stored, system={SUSPECT_KEY: True, OUTDATED_BY_KEY: ["0" * 32]})
    memory.store.update([noted])
    report = memory.dream(user_id="u1")
    assert chat.id in {c.id for c in report.archived}
    (row,) = memory.store.fetchall("SELECT undo FROM dreams WHERE id = ?", (report.dream_id,))
    undo = json.loads(row[0])
    for before in undo["before"]:  # as the log was written before the move
        before["metadata"] = {**before["metadata"], **before.pop("system")}
    memory.store.execute("UPDATE dreams SET undo = ? WHERE id = ?", (json.dumps(undo), report.dream_id))
    memory.undo_dream(report.dream_id, user_id="u1")
    back = memory.get(chat.id, user_id="u1")
    assert back.is_active and back.metadata == {"mine": 1} and back.system == noted.system
