"""An adapter message's key and a keyed entry are the library's notes (issue 35, item 3).

The adapters find a message they stored by its key, and a keyed entry (the LangGraph
store) is never compared with other statements by write-time update resolution. Both
used to be read from the caller's ``metadata``: a caller's ``{"message_key": ...}`` made
a later real message be skipped, and a caller's ``{"keyed": true}`` let a statement
bypass current-truth resolution. They now live in ``MemoryRecord.system``; the same
names in ``metadata`` are the caller's data and change nothing.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from llama_index.core.llms import ChatMessage

from dreammem import DreamMemory, Status
from dreammem.agent_api import ChatTurn, ingest_turns, session_turns
from dreammem.embed import HashingEmbedder
from dreammem.errors import ValidationError
from dreammem.keyed import get_keyed, put_keyed
from dreammem.system_meta import KEYED_KEY, MESSAGE_KEY
from langchain_dreammem.history import DreamMemChatMessageHistory
from llamaindex_dreammem.memory import DreamMemMemory

T0 = datetime(2026, 11, 1, 9, tzinfo=UTC)
REAL = "I am allergic to peanuts."
OLD, NEW = "I take my coffee with regular milk.", "I switched to oat milk in my coffee."


def _hash_key(session_id: str, role: str, text: str) -> str:
    """The key an adapter gives a message without an id (its first occurrence in the session)."""
    return "h:" + hashlib.sha1(f"{session_id}\x1f{role}\x1f{text}\x1f0".encode()).hexdigest()


def _langchain(memory: DreamMemory) -> str:
    DreamMemChatMessageHistory(memory, user_id="u1", session_id="s1").add_messages(
        [HumanMessage(REAL, id="m1")]
    )
    return "id:m1"


def _llamaindex(memory: DreamMemory) -> str:
    DreamMemMemory.from_defaults(memory=memory, user_id="u1", session_id="s1").put(
        ChatMessage(role="user", content=REAL)
    )
    return _hash_key("s1", "user", REAL)


@pytest.mark.parametrize(
    ("forged", "adapter"), [("id:m1", _langchain), (_hash_key("s1", "user", REAL), _llamaindex)]
)
def test_a_caller_message_key_does_not_make_a_real_message_be_skipped(
    memory: DreamMemory, forged: str, adapter: Any
) -> None:
    mine = memory.add("my own note", user_id="u1", session_id="s1", metadata={MESSAGE_KEY: forged})
    assert adapter(memory) == forged  # the adapter keys the real message as the caller guessed
    stored = [r for r in memory.session_records(user_id="u1", session_id="s1") if r.content == REAL]
    assert len(stored) == 1 and stored[0].system == {MESSAGE_KEY: forged}
    assert memory.get(mine.id, user_id="u1").metadata == {MESSAGE_KEY: forged}
    assert memory.get(mine.id, user_id="u1").system == {}
    adapter(memory)  # the adapter's own key still de-duplicates
    assert [r.content for r in memory.session_records(user_id="u1", session_id="s1")].count(REAL) == 1


def test_the_transcript_reads_message_ids_from_the_notes_only(memory: DreamMemory) -> None:
    memory.add("my own note", user_id="u1", session_id="s1", metadata={MESSAGE_KEY: "id:forged"})
    ingest_turns(memory, [ChatTurn("user", REAL, "m1")], user_id="u1", session_id="s1")
    turns = session_turns(memory, user_id="u1", session_id="s1")
    assert [(t.content, t.message_id) for t in turns] == [("my own note", None), (REAL, "m1")]


def _coffee(memory: DreamMemory, metadata: dict[str, Any]) -> tuple[Status, Status]:
    old = memory.add(OLD, user_id="u1", event_time=T0)
    new = memory.add(NEW, user_id="u1", event_time=T0 + timedelta(days=7), metadata=metadata)
    return memory.get(old.id, user_id="u1").status, memory.get(new.id, user_id="u1").status


@pytest.mark.parametrize("keyed", [True, {"path": ["prefs"], "key": "milk", "value": {}, "indexed": True}])
def test_a_caller_keyed_flag_does_not_bypass_update_resolution(memory: DreamMemory, keyed: object) -> None:
    assert _coffee(memory, {KEYED_KEY: keyed}) == (Status.SUPERSEDED, Status.ACTIVE)
    (new,) = [r for r in memory.get_all(user_id="u1") if r.content == NEW]
    assert new.metadata == {KEYED_KEY: keyed} and KEYED_KEY not in new.system


def test_a_keyed_entry_still_updates_no_statement(memory: DreamMemory) -> None:
    old = memory.add(OLD, user_id="u1", event_time=T0)
    entry = put_keyed(memory, user_id="u1", path=("prefs",), key="milk", value={"text": NEW}, text=NEW)
    assert memory.get(old.id, user_id="u1").is_active
    assert entry.record.metadata == {} and entry.record.system[KEYED_KEY]["key"] == "milk"
    again = get_keyed(memory, user_id="u1", path=("prefs",), key="milk")
    assert again is not None and again.value == {"text": NEW}


def test_add_messages_refuses_keys_that_do_not_match_the_turns(memory: DreamMemory) -> None:
    turn = {"content": "hi", "user_id": "u1"}
    for keys in ([], ["a", "b"], [""], [7]):
        with pytest.raises(ValidationError):
            memory.add_messages([turn], keys)  # type: ignore[list-item]
    assert memory.get_all(user_id="u1") == []


def _rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def _text(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_an_export_of_version_2_has_message_keys_and_keyed_entries_moved(
    memory: DreamMemory, tmp_path: Path
) -> None:
    ingest_turns(memory, [ChatTurn("user", REAL, "m1")], user_id="u1", session_id="s1")
    put_keyed(memory, user_id="u1", path=("prefs",), key="milk", value={"text": NEW}, text=NEW)
    memory.add("my own note", user_id="u1", metadata={MESSAGE_KEY: 7, KEYED_KEY: True})
    rows = _rows(memory.export(user_id="u1"))
    assert rows[0]["version"] == 3
    old = [{**rows[0], "version": 2}]  # as version 2 wrote it: these two notes inside the metadata
    for row in rows[1:]:
        record = dict(row["record"])
        later = {k: v for k, v in record["system"].items() if k in (MESSAGE_KEY, KEYED_KEY)}
        record["system"] = {k: v for k, v in record["system"].items() if k not in later}
        record["metadata"] = {**record["metadata"], **later}
        old.append({**row, "record": record})
    with DreamMemory(tmp_path / "other", embedder=HashingEmbedder()) as fresh:
        fresh.import_(_text(old), user_id="u1")
        assert fresh.get_all(user_id="u1", status=None) == memory.get_all(user_id="u1", status=None)
        assert fresh.stored_message_keys(["id:m1"], user_id="u1", session_id="s1") == {"id:m1"}
        entry = get_keyed(fresh, user_id="u1", path=("prefs",), key="milk")
        assert entry is not None and entry.value == {"text": NEW}


def test_undoing_a_dream_logged_before_the_later_move_puts_the_key_back_in_system(
    memory: DreamMemory,
) -> None:
    ingest_turns(memory, [ChatTurn("user", "lol", "m1"), ChatTurn("user", "ok thanks")], user_id="u1")
    (chat,) = [r for r in memory.get_all(user_id="u1") if r.content == "lol"]
    report = memory.dream(user_id="u1")
    assert chat.id in {c.id for c in report.archived}
    (row,) = memory.store.fetchall("SELECT undo FROM dreams WHERE id = ?", (report.dream_id,))
    undo = json.loads(row[0])
    assert undo.pop("notes") == 3
    for before in undo["before"]:  # as the log was written at notes version 2
        key = before["system"].pop(MESSAGE_KEY, None)
        before["metadata"] = {} if key is None else {MESSAGE_KEY: key}
    memory.store.execute("UPDATE dreams SET undo = ? WHERE id = ?", (json.dumps(undo), report.dream_id))
    memory.undo_dream(report.dream_id, user_id="u1")
    back = memory.get(chat.id, user_id="u1")
    assert back.is_active and back.metadata == {} and back.system == chat.system
    assert ingest_turns(memory, [ChatTurn("user", "lol", "m1")], user_id="u1") == []
