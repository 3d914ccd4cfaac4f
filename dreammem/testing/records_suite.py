"""Conformance of the records roles: reads and writes, history, lifecycle (transactions, capabilities)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from dreammem.errors import BackendError
from dreammem.stores.base import (
    REQUIRED_CAPABILITIES,
    RecordCapability,
    RecordLookups,
    RecordQuery,
    RecordStore,
)
from dreammem.testing.records import T0, put, rec
from dreammem.testing.role_suite import RoleSuite
from dreammem.types import Kind, Layer, Status

__all__ = ["RecordHistorySuite", "RecordsSuite", "StoreLifecycleSuite"]


class StoreLifecycleSuite(RoleSuite):
    """The ``StoreLifecycle`` role: transactions, and the capabilities a store declares."""

    def test_capabilities_are_typed_and_name_the_required_roles(self, record_store: RecordStore) -> None:
        declared = record_store.capabilities
        assert all(isinstance(c, RecordCapability) for c in declared), sorted(declared)
        assert declared >= REQUIRED_CAPABILITIES

    def test_a_failed_transaction_leaves_nothing(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        kept = rec(alice, "kept")
        put(record_store, [kept])
        with pytest.raises(RuntimeError), record_store.transaction():
            put(record_store, [rec(alice, "rolled back", 1)])
            record_store.update([dataclasses.replace(kept, status=Status.DELETED)])
            raise RuntimeError("boom")
        assert [r.id for r in record_store.find(alice, statuses=None)] == [kept.id]
        assert record_store.get(alice, [kept.id])[0].is_active


class RecordsSuite(RoleSuite):
    """The ``RecordReads``, ``RecordLookups`` and ``RecordWrites`` roles: records come back equal, by user."""

    def test_a_record_comes_back_equal(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        record = rec(
            alice,
            "Flight LH 1234 leaves at 07:45, gate B12 — 价格 ¥3,200",
            layer=Layer.SEMANTIC,
            kind=Kind.FACT,
            session_id="s1",
            provenance=("p1", "p2"),
            entities=("LH 1234",),
            slot="trip/flight",
            metadata={"nested": {"a": [1, 2]}, "text": "ünïcode"},
        )
        (rowid,) = put(record_store, [record])
        assert record_store.get(alice, [record.id]) == [record]
        assert record_store.get_by_rowids(alice, [rowid]) == {rowid: record}
        assert record_store.rowids(alice, [record.id]) == {record.id: rowid}
        assert record_store.ids_with_prefix(alice, record.id[:6]) == [record.id]

    def test_a_speaker_comes_back_and_an_update_keeps_it(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        said, unsaid = rec(alice, "we danced at the studio", speaker="Zoë Ann"), rec(alice, "Gina: hello", 1)
        rowids = put(record_store, [said, unsaid])
        assert record_store.get(alice, [said.id, unsaid.id]) == [said, unsaid]
        assert record_store.get_by_rowids(alice, rowids)[rowids[0]].speaker == "Zoë Ann"
        assert record_store.get_by_rowids(alice, rowids)[rowids[1]].speaker is None
        assert {r.id: r.speaker for r in record_store.find(alice)} == {said.id: "Zoë Ann", unsaid.id: None}
        # who said a record is written once: an update cannot change it
        record_store.update([dataclasses.replace(said, importance=5, speaker="Jon")])
        assert record_store.get(alice, [said.id]) == [dataclasses.replace(said, importance=5)]

    def test_system_notes_are_stored_apart_from_the_callers_metadata(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        caller = {"possibly_outdated_by": ["caller data"], "topic": "tea"}  # the caller's, by the same name
        record = rec(alice, "I prefer green tea", metadata=caller, system={"possibly_outdated_by": ["n1"]})
        (rowid,) = put(record_store, [record])
        (back,) = record_store.get(alice, [record.id])
        assert back.metadata == caller and back.system == {"possibly_outdated_by": ["n1"]}
        marked = dataclasses.replace(back, system={"update_decision": {"action": "supersede", "by": "n2"}})
        record_store.update([marked])
        assert record_store.get_by_rowids(alice, [rowid]) == {rowid: marked}
        assert record_store.find(alice) == [marked]

    def test_message_keys_are_found_in_the_system_notes_only(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        noted = rec(alice, "hello", session_id="s1", system={"message_key": "id:m1"})
        forged = rec(alice, "mine", session_id="s1", metadata={"message_key": "id:m2"})
        other = rec(bob, "hello", session_id="s1", system={"message_key": "id:m3"})
        put(record_store, [noted, forged, other])
        assert record_store.existing_message_keys(alice, "s1", ["id:m1", "id:m2", "id:m3"]) == {"id:m1"}
        assert record_store.existing_message_keys(alice, None, ["id:m1"]) == set()
        record_store.update([dataclasses.replace(noted, system={})])
        assert record_store.existing_message_keys(alice, "s1", ["id:m1"]) == set()

    def test_reads_keep_the_order_asked_and_skip_missing(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        a, b = rec(alice, "first"), rec(alice, "second", 1)
        put(record_store, [a, b])
        assert [r.id for r in record_store.get(alice, [b.id, "missing", a.id])] == [b.id, a.id]

    def test_every_read_is_scoped_to_its_user(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        secret = rec(alice, "alice keeps the violin in the attic")
        (rowid,) = put(record_store, [secret])
        assert record_store.get(bob, [secret.id]) == []
        assert record_store.get_by_rowids(bob, [rowid]) == {}
        assert record_store.find(bob) == []
        assert record_store.keyword_search(bob, ["violin"], 5) == []
        assert record_store.count(bob) == 0 and record_store.count(alice) == 1
        assert alice in record_store.users()

    def test_active_texts_are_this_users_active_records(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        kept, archived = rec(alice, "Wren: the kiln runs hot on Sundays"), rec(alice, "an old plan", 1)
        rowids = put(record_store, [kept, archived])
        record_store.update([dataclasses.replace(archived, status=Status.ARCHIVED)])
        assert record_store.active_texts(alice, [*rowids, 10**9]) == {rowids[0]: kept.content}
        assert record_store.active_texts(bob, rowids) == {}
        assert record_store.active_texts(alice, []) == {}

    def test_update_changes_status_and_a_missing_record_fails(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        record = rec(alice, "the cat is called Miso")
        put(record_store, [record])
        archived = dataclasses.replace(record, status=Status.ARCHIVED, importance=5)
        record_store.update([archived])
        assert record_store.get(alice, [record.id]) == [archived]
        assert record_store.find(alice) == []
        assert record_store.count(alice, status=Status.ARCHIVED) == 1
        with pytest.raises(BackendError):
            record_store.update([dataclasses.replace(record, user_id=bob)])

    def test_find_filters_and_orders_by_event_time(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        old = rec(alice, "old value", 0, layer=Layer.SEMANTIC, kind=Kind.PREFERENCE, slot="food/tea")
        new = rec(alice, "new value", 10, layer=Layer.SEMANTIC, kind=Kind.PREFERENCE, slot="food/tea")
        turn = rec(alice, "a turn", 5, session_id="s1")
        put(record_store, [old, new, turn])
        assert [r.id for r in record_store.find(alice)] == [new.id, turn.id, old.id]
        assert [r.id for r in record_store.find(alice, newest_first=False, limit=2)] == [old.id, turn.id]
        assert [r.id for r in record_store.find(alice, slot="food/tea")] == [new.id, old.id]
        assert [r.id for r in record_store.find(alice, slot_prefix="food/")] == [new.id, old.id]
        assert [r.id for r in record_store.find(alice, session_id="s1")] == [turn.id]
        assert [r.id for r in record_store.find(alice, kinds=[Kind.TURN])] == [turn.id]
        window = record_store.find(alice, since=T0 + timedelta(minutes=1), until=T0 + timedelta(minutes=10))
        assert [r.id for r in window] == [turn.id]
        assert record_store.slots("food/") == ["food/tea"] or "food/tea" in record_store.slots("food/")

    def test_find_many_answers_each_query_as_find_does(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        turns = [rec(alice, f"turn {n}", n, session_id=f"s{n % 2}") for n in range(6)]
        bobs = rec(bob, "bob's turn", 2, session_id="s0")
        put(record_store, [*turns, bobs])
        record_store.update([dataclasses.replace(turns[2], status=Status.SUPERSEDED)])
        queries = [
            RecordQuery(alice, session_id="s0", since=turns[1].event_time, newest_first=False, limit=2),
            RecordQuery(alice, statuses=None, session_id="s0", until=turns[4].event_time, limit=5),
            RecordQuery(bob, session_id="s0", since=turns[1].event_time, newest_first=False, limit=2),
            RecordQuery(alice, session_id="s1", since=turns[1].event_time, newest_first=False, limit=2),
            RecordQuery(alice, session_id="nowhere"),
            RecordQuery(alice, statuses=[Status.SUPERSEDED], limit=1),
        ]
        found = record_store.find_many(queries)
        assert [[r.id for r in f] for f in found] == [
            [turns[4].id],
            [turns[2].id, turns[0].id],
            [bobs.id],
            [turns[1].id, turns[3].id],
            [],
            [turns[2].id],
        ]
        assert found == RecordLookups.find_many(record_store, queries)  # the default: one find each
        assert record_store.find_many([]) == []

    def test_find_pages_with_an_offset(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        records = [rec(alice, f"page note {n}", n) for n in range(5)]
        put(record_store, records)
        newest = [r.id for r in reversed(records)]
        assert [r.id for r in record_store.find(alice, limit=2, offset=2)] == newest[2:4]
        assert [r.id for r in record_store.find(alice, offset=3)] == newest[3:]
        assert record_store.find(alice, limit=2, offset=5) == []

    def test_filter_rowids_by_columns(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        a = rec(alice, "agent one turn", agent_id="a1", session_id="s1")
        b = rec(alice, "agent two fact", 1, agent_id="a2", layer=Layer.SEMANTIC, kind=Kind.FACT)
        gone = rec(alice, "agent one, archived", 2, agent_id="a1")
        rowids = put(record_store, [a, b, gone])
        record_store.update([dataclasses.replace(gone, status=Status.ARCHIVED)])
        assert record_store.filter_rowids(alice, agent_id="a1", limit=10) == {rowids[0]}
        assert record_store.filter_rowids(alice, kinds=[Kind.FACT], limit=10) == {rowids[1]}
        assert record_store.filter_rowids(alice, layers=[Layer.EPISODIC], session_id="s1", limit=10) == {
            rowids[0]
        }
        assert record_store.filter_rowids(alice, limit=1) is None

    def test_ids_in_use_across_users(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        record = rec(alice, "taken id")
        put(record_store, [record])
        assert record_store.ids_in_use([record.id, "no-such-id"]) == {record.id}

    def test_session_neighbours_follow_the_session_order(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        first, second = rec(alice, "ask", session_id="s1"), rec(alice, "answer", session_id="s1")
        fact = rec(alice, "answer", layer=Layer.SEMANTIC, kind=Kind.FACT, session_id="s1")
        gone, last = rec(alice, "archived", 1, session_id="s1"), rec(alice, "thanks", 2, session_id="s1")
        other, loose = rec(alice, "elsewhere", 1, session_id="s2"), rec(alice, "no session", 1)
        theirs = rec(bob, "bob's", 1, session_id="s1")
        rowids = put(record_store, [first, second, fact, gone, last, other, loose, theirs])
        record_store.update([dataclasses.replace(gone, status=Status.ARCHIVED)])
        a, b, _fact, _gone, c, o, _loose, t = rowids
        # Equal event times keep the order of insertion; facts, inactive turns and other users' rows drop out.
        assert record_store.session_neighbours(alice, rowids) == {
            a: (None, b),
            b: (a, c),
            c: (b, None),
            o: (None, None),
        }
        assert record_store.session_neighbours(bob, [a, t]) == {t: (None, None)}
        assert record_store.session_neighbours(alice, []) == {}


class RecordHistorySuite(RoleSuite):
    """The ``RecordHistory`` role: supersede chains, twins and records derived from others."""

    def test_history_follows_supersede_links(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        old, new = rec(alice, "lives in Porto"), rec(alice, "lives in Lisbon", 5)
        put(record_store, [old, new])
        record_store.update([dataclasses.replace(old, status=Status.SUPERSEDED, superseded_by=new.id)])
        assert [r.id for r in record_store.history_chain(alice, new.id)] == [old.id, new.id]

    def test_superseded_by_any_finds_direct_predecessors_of_this_user(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        first, second, third = (rec(alice, f"standup at {h}:00", h) for h in (9, 10, 11))
        other = rec(bob, "standup at 8:00")
        put(record_store, [first, second, third, other])
        record_store.update(
            [
                dataclasses.replace(first, status=Status.SUPERSEDED, superseded_by=second.id),
                dataclasses.replace(second, status=Status.SUPERSEDED, superseded_by=third.id),
            ]
        )
        record_store.update([dataclasses.replace(other, status=Status.SUPERSEDED, superseded_by=third.id)])
        assert [r.id for r in record_store.superseded_by_any(alice, [third.id])] == [second.id]
        found = record_store.superseded_by_any(alice, [second.id, third.id, second.id])
        assert sorted(r.id for r in found) == sorted([first.id, second.id])
        assert record_store.superseded_by_any(alice, [first.id]) == []
        assert record_store.superseded_by_any(bob, [second.id]) == []

    def test_twins_and_derived_records(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        turn = rec(alice, "I moved to Lisbon")
        twin = rec(alice, "I moved to Lisbon", 1, layer=Layer.SEMANTIC, kind=Kind.FACT, provenance=(turn.id,))
        summary = rec(alice, "moved house", 2, layer=Layer.SEMANTIC, provenance=(turn.id,))
        alone = rec(alice, "I moved to Lisbon", 3)
        put(record_store, [turn, twin, summary, alone])
        assert record_store.twins_of(alice, [turn, twin, summary, alone]) == {
            turn.id: twin.id,
            twin.id: turn.id,
        }
        assert record_store.twins_of(alice, []) == {}
        many = record_store.twins_many([turn, twin, summary, alone, turn])
        assert {i: [r.id for r in found] for i, found in many.items()} == {
            turn.id: [twin.id],
            twin.id: [turn.id],
            summary.id: [],
            alone.id: [],
        }
        assert record_store.twins_many([]) == {}
        assert {r.id for r in record_store.derived_from(alice, [turn.id])} == {twin.id, summary.id}
        assert record_store.derived_from(bob, [turn.id]) == []
