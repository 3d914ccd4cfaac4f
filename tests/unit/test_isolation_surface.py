"""Every public operation of one user leaves another user's memory untouched and unseen.

Bob's memory shares everything a collision could come from with Alice's: session ids,
slots, message keys, entity names, task-state sessions. Alice then runs the whole facade
(every recall path, reads, edits, dreams, undo, export, purge, delete). Afterwards no
answer she got holds Bob's canary, and Bob's records, queue, task state, dream log and
recall are exactly what they were.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory, NotFoundError
from dreammem.agent_api import forget_session, memory_block, search_memory, session_turns
from dreammem.embed import HashingEmbedder
from dreammem.keyed import get_keyed, list_keyed, put_keyed, rank_keyed
from dreammem.types import MemoryRecord
from tests.unit.dream.support import T0

CANARY = "zulu-kilo"
ALICE = "alice"
QUERY = "Excel budget Lisbon Tom Becker Acme peanuts Vim dark theme"
PATHS = ["vector", "keyword", "temporal", "graph"]


def _turns(user: str, extra: str) -> list[dict[str, Any]]:
    texts = [
        f"I prefer Excel reports over PDF {extra}",
        f"My budget for the Lisbon trip is 4200 EUR {extra}",
        f"Tom Becker from Acme Corp signs the contracts {extra}",
        "ok thanks",
        f"Remember: I am allergic to peanuts {extra}",
    ]
    return [
        {
            "content": text,
            "user_id": user,
            "session_id": "s1",
            "event_time": T0 + timedelta(minutes=n),
        }
        for n, text in enumerate(texts)
    ]


def _add_messages(memory: DreamMemory, user: str, extra: str) -> list[MemoryRecord]:
    """The turns as an adapter writes them: message keys m0, m1, ... in each record's system notes."""
    turns = _turns(user, extra)
    return memory.add_messages(turns, [f"m{n}" for n in range(len(turns))])


def _bob_state(memory: DreamMemory) -> dict[str, object]:
    """Bob's memory, comparable with == (reads only: recall would count an access)."""
    records = memory.get_all(user_id="bob", status=None, limit=1000)
    return {
        "records": sorted((r.to_dict() for r in records), key=lambda d: d["id"]),
        "queue": sorted(r.id for r in memory.store.queued("bob")),
        "task": memory.task_state(user_id="bob", session_id="s1"),
        "dreams": [d.dream_id for d in memory.dreams(user_id="bob")],
        "keys": memory.stored_message_keys(["m0", "m1", "m9"], user_id="bob", session_id="s1"),
        "export": memory.export(user_id="bob").splitlines()[1:],  # the header holds the export time
    }


@pytest.fixture
def shared(tmp_path: Path) -> DreamMemory:
    memory = DreamMemory(tmp_path / "store", embedder=HashingEmbedder())
    _add_messages(memory, "bob", CANARY)
    memory.remember(f"My favourite editor is Vim {CANARY}", user_id="bob", slot="user/editor")
    memory.set_task_state({"goal": f"book flights {CANARY}"}, user_id="bob", session_id="s1")
    value = {"value": f"dark {CANARY}"}
    put_keyed(memory, user_id="bob", path=("prefs",), key="theme", value=value, text=f"theme dark {CANARY}")
    memory.dream(user_id="bob")
    memory.add("a turn Bob adds after his dream", user_id="bob", session_id="s1")
    return memory


def _alice_calls(memory: DreamMemory) -> list[tuple[str, Callable[[], object]]]:
    """Every public operation, as Alice, in an order where each has something to act on."""
    alice = _add_messages(memory, "alice", "from alice")
    first = alice[0].id
    calls: list[tuple[str, Callable[[], object]]] = [
        (
            f"recall {p}",
            lambda p=p: memory.recall(
                "Excel budget Tom Becker Acme peanuts", user_id="alice", k=20, paths=[p]
            ),
        )  # type: ignore[misc]
        for p in PATHS
    ]
    calls += [
        (
            "recall all",
            lambda: memory.recall(f"what did Bob say? {QUERY}", user_id="alice", k=20),
        ),
        ("recall session", lambda: memory.recall("reports", user_id="alice", session_id="s1", k=20)),
        ("get_all", lambda: list(memory.get_all(user_id="alice", status=None, limit=1000))),
        ("history", lambda: memory.history(first, user_id="alice")),
        ("working_memory", lambda: memory.working_memory(user_id="alice", session_id="s1")),
        ("session_records", lambda: memory.session_records(user_id="alice", session_id="s1")),
        ("slot_records", lambda: memory.slot_records(user_id="alice", slot_prefix="user/")),
        ("message keys", lambda: memory.stored_message_keys(["m0", "m1"], user_id="alice", session_id="s1")),
        ("task_state", lambda: memory.task_state(user_id="alice", session_id="s1")),
        ("set_task_state", lambda: memory.set_task_state({"goal": "x"}, user_id="alice", session_id="s1")),
        ("stats", lambda: memory.stats(user_id="alice")),
        ("keyed get", lambda: get_keyed(memory, user_id="alice", path=("prefs",), key="theme")),
        ("keyed list", lambda: list_keyed(memory, user_id="alice", prefix=("prefs",))),
        (
            "keyed rank",
            lambda: rank_keyed(
                memory, "dark theme", user_id="alice", entries=list_keyed(memory, user_id="alice")
            ),
        ),
        ("agent search", lambda: search_memory(memory, "editor Vim theme", user_id="alice", k=20)),
        ("agent block", lambda: memory_block(memory, "dark theme budget Lisbon", user_id="alice", k=20)),
        ("agent transcript", lambda: session_turns(memory, user_id="alice", session_id="s1")),
        (
            "remember",
            lambda: memory.remember("I use Emacs", user_id="alice", slot="user/editor"),
        ),
        ("update", lambda: memory.update(first, "I prefer CSV reports over PDF", user_id="alice")),
        ("forget", lambda: memory.forget(alice[1].id, user_id="alice")),
        ("dream dry", lambda: memory.dream(user_id="alice", dry_run=True)),
        ("dream", lambda: memory.dream(user_id="alice")),
        ("dream 2", lambda: memory.dream(user_id="alice", level=2)),
        ("dreams", lambda: memory.dreams(user_id="alice")),
        (
            "undo",
            lambda: [memory.undo_dream(d.dream_id, user_id="alice") for d in memory.dreams(user_id="alice")],
        ),
        ("end_session", lambda: memory.end_session(user_id="alice", session_id="s1")),
        ("forget session", lambda: forget_session(memory, user_id="alice", session_id="s1")),
        ("export", lambda: memory.export(user_id="alice")),
        ("purge one", lambda: memory.purge(alice[2].id, user_id="alice")),
        ("purge all dry", lambda: memory.purge(user_id="alice", dry_run=True)),
        ("purge all", lambda: memory.purge(user_id="alice")),
        ("re-add", lambda: memory.add_many(_turns("alice", "again"))),
        ("forget_all", lambda: memory.forget_all(user_id="alice")),
    ]
    return calls


def test_nothing_alice_does_shows_or_changes_bobs_memory(shared: DreamMemory) -> None:
    with shared as memory:
        recall = memory.recall("Excel reports budget Lisbon", user_id="bob", k=10).ids
        before = _bob_state(memory)
        assert before["records"] and before["queue"] and before["dreams"] and recall
        for name, call in _alice_calls(memory):
            answer = repr(call())
            assert CANARY not in answer, name
        assert _bob_state(memory) == before
        assert memory.recall("Excel reports budget Lisbon", user_id="bob", k=10).ids == recall
        left = memory.get_all(user_id="alice", status=None, limit=1000)
        assert left and {r.status.value for r in left} == {"deleted"}  # forget_all is soft


def test_bobs_ids_are_not_found_for_alice_whatever_the_operation(shared: DreamMemory) -> None:
    with shared as memory:
        before = _bob_state(memory)
        bob_ids = [r["id"] for r in before["records"]]  # type: ignore[index]
        bob_dream = before["dreams"][0]  # type: ignore[index]
        operations: list[Callable[[str], object]] = [
            lambda i: memory.get(i, user_id="alice"),
            lambda i: memory.history(i, user_id="alice"),
            lambda i: memory.forget(i, user_id="alice"),
            lambda i: memory.update(i, "overwritten", user_id="alice"),
            lambda i: memory.revert_update(i, user_id="alice"),
            lambda i: memory.purge(i, user_id="alice"),
        ]
        for record_id in bob_ids:
            for operation in operations:
                with pytest.raises(NotFoundError) as info:
                    operation(record_id)
                assert CANARY not in str(info.value)
        with pytest.raises(NotFoundError):
            memory.undo_dream(bob_dream, user_id="alice")
        assert _bob_state(memory) == before
