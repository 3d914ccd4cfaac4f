"""The record store conformance suite: every :class:`~dreammem.stores.base.RecordStore` must pass it."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import pytest

from dreammem.errors import BackendError
from dreammem.stores.base import DreamLogRow, RecordStore
from dreammem.testing.records import T0, put, rec
from dreammem.testing.vector_index_suite import unit_rows
from dreammem.types import Kind, Layer, Status

__all__ = ["RecordStoreSuite"]

MODEL = "conformance-model"
DIM = 8


class RecordStoreSuite:
    """Abstract conformance tests; override :meth:`record_store` (a store, empty or shared)."""

    @pytest.fixture
    def record_store(self) -> Iterator[RecordStore]:
        """The store under test."""
        raise NotImplementedError("override the record_store fixture")

    @pytest.fixture
    def users(self, record_store: RecordStore) -> Iterator[tuple[str, str]]:
        """Two fresh user ids; their records are deleted afterwards."""
        pair = (f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}")
        yield pair
        for user in pair:
            everything = record_store.find(user, statuses=None)
            record_store.dequeue(user, [r.id for r in everything])
            record_store.delete(user, [r.id for r in everything])

    # -- records

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

    def test_find_pages_with_an_offset(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        records = [rec(alice, f"page note {n}", n) for n in range(5)]
        put(record_store, records)
        newest = [r.id for r in reversed(records)]
        assert [r.id for r in record_store.find(alice, limit=2, offset=2)] == newest[2:4]
        assert [r.id for r in record_store.find(alice, offset=3)] == newest[3:]
        assert record_store.find(alice, limit=2, offset=5) == []

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

    def test_erasure_leaves_no_row_behind(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        doomed, kept = rec(alice, "my passport number is X123"), rec(alice, "likes tea", 1)
        rowids = put(record_store, [doomed, kept])
        record_store.put_vectors(rowids, MODEL, unit_rows(2, DIM, 9))
        record_store.enqueue([doomed, kept])
        report = json.dumps({"summary": f"noted: {doomed.content}", "sources": [doomed.id]})
        stamp = T0.isoformat()
        dream_id = f"dream-{uuid.uuid4().hex}"
        record_store.add_dream(DreamLogRow(dream_id, alice, 1, "test", stamp, stamp, "done", report, "{}"))
        erased, rewritten = record_store.erase_records(alice, [doomed.id, "no-such-id"], [doomed.content])
        assert (erased, rewritten) == ([doomed.id], 1)
        assert [r.id for r in record_store.find(alice, statuses=None)] == [kept.id]
        assert record_store.keyword_search(alice, ["passport"], 5) == []
        assert record_store.count_vectors(MODEL, alice) == 1
        assert [r.id for r in record_store.queued(alice)] == [kept.id]
        row = record_store.get_dream(dream_id)
        assert row is not None and doomed.content not in row.report and doomed.id not in row.report
        record_store.set_task_state(alice, "s1", {"goal": "renew passport"}, T0)
        put(record_store, [rec(bob, "bob stays")])
        assert record_store.erase_user(alice) == 1
        assert record_store.find(alice, statuses=None) == [] and record_store.task_states(alice) == {}
        assert record_store.count(bob) == 1
        assert isinstance(record_store.compact(), bool)

    def test_grounded_times_follow_their_records(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        said, tea, other = rec(alice, "hiked yesterday"), rec(alice, "likes tea", 1), rec(bob, "bob's", 2)
        rowids = put(record_store, [said, tea, other])
        span = (T0 - timedelta(days=1), T0)
        record_store.put_grounded_times(alice, {rowids[0]: span, rowids[1]: None, rowids[2]: span})
        stored = record_store.grounded_times(alice, rowids)
        if "grounded_times" not in record_store.capabilities:
            assert stored == {}  # a backend without the capability keeps none (recall caches them)
            return
        assert stored == {rowids[0]: span, rowids[1]: None}  # bob's row is not alice's to write
        assert record_store.grounded_times(bob, rowids) == {}
        record_store.update([dataclasses.replace(tea, status=Status.SUPERSEDED)])  # status alone: kept
        assert record_store.grounded_times(alice, rowids) == {rowids[0]: span, rowids[1]: None}
        record_store.update([dataclasses.replace(said, content="hiked last summer")])  # a new text: dropped
        assert record_store.grounded_times(alice, rowids) == {rowids[1]: None}
        record_store.update([dataclasses.replace(tea, event_time=T0 + timedelta(days=1))])  # a new time too
        assert record_store.grounded_times(alice, rowids) == {}
        record_store.put_grounded_times(alice, {rowids[1]: None})
        record_store.delete(alice, [tea.id])
        assert record_store.grounded_times(alice, rowids) == {}

    def test_pointing_times_are_the_windows_said_in_a_window(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        texts = ["flew home last week", "likes plums", "not grounded yet", "sold the van", "much later"]
        records = [rec(alice, text, minutes) for text, minutes in zip(texts, (0, 1, 2, 3, 600), strict=True)]
        rowids = put(record_store, [*records, rec(bob, "bob flew too")])
        span = (T0 - timedelta(days=9), T0 - timedelta(days=2))
        record_store.put_grounded_times(alice, {rowids[0]: span, rowids[1]: None, rowids[3]: span})
        record_store.update([dataclasses.replace(records[3], status=Status.ARCHIVED)])
        until = T0 + timedelta(minutes=60)
        found = record_store.pointing_times(alice, since=T0, until=until, limit=10)
        if "grounded_times" not in record_store.capabilities:
            assert found == ({}, rowids[:3])  # none kept: every active row said in it is not grounded yet
            return
        assert found == ({rowids[0]: span}, [rowids[2]])
        assert record_store.pointing_times(alice, since=T0, until=until, limit=1) == ({rowids[0]: span}, [])
        assert record_store.pointing_times(bob, since=T0, until=until, limit=10) == ({}, [rowids[5]])
        _, missing = record_store.pointing_times(alice, since=None, until=None, limit=10)
        assert missing == [rowids[2], rowids[4]]

    # -- keyword index

    def test_keyword_search_finds_active_records_only(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        hit, gone = rec(alice, "the blue kayak is in the garage"), rec(alice, "a blue umbrella", 1)
        other = rec(alice, "nothing relevant here", 2)
        rowids = put(record_store, [hit, gone, other])
        record_store.update([dataclasses.replace(gone, status=Status.ARCHIVED)])
        found = record_store.keyword_search(alice, ["blue", "kayak"], 5)
        assert [r for r, _ in found] == [rowids[0]]
        assert all(score > 0 for _, score in found)
        assert record_store.keyword_search(alice, ["umbrella"], 5) == []

    def test_keyword_search_matches_word_forms_and_diacritics(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        records = [rec(alice, "she paints sunsets at the café"), rec(alice, "a dull note", 1)]
        rowids = put(record_store, records)
        for words in (["painted"], ["painting", "sunset"], ["cafe"]):
            assert [r for r, _ in record_store.keyword_search(alice, words, 5)] == [rowids[0]], words

    def test_a_term_no_record_holds_does_not_hide_the_rows_holding_every_other(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        both = rec(alice, "kayak rental by the fjord, with a long list of many other words in it")
        filler = [rec(alice, "kayak kayak kayak", n + 1) for n in range(3)]  # short: an OR ranks them first
        fjords = [rec(alice, "fjord fjord fjord", n + 10) for n in range(3)]
        rowids = put(record_store, [both, *filler, *fjords])
        absent = f"zq{uuid.uuid4().hex[:8]}"
        found = record_store.keyword_search(alice, ["kayak", "fjord", absent], 1)
        assert [r for r, _ in found] == [rowids[0]]

    def test_a_users_keyword_ranking_does_not_move_with_other_users_records(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        mine = [
            rec(alice, "kayak trip"),
            rec(alice, "fjord trip here", 1),
            rec(alice, "kayak and fjord at dawn with the whole crew", 2),
            rec(alice, "rain all day in the fjord town", 3),
            *[rec(alice, f"a note number {n} about nothing", n + 4) for n in range(4)],
        ]
        ids = dict(zip(put(record_store, mine), [r.id for r in mine], strict=True))
        queries = (["kayak", "fjord"], ["kayak"], ["fjord", "trip", "rain"], ["kayak", "note"])

        def ranked() -> dict[str, list[tuple[str, float]]]:
            return {
                " ".join(q): [(ids[r], round(s, 9)) for r, s in record_store.keyword_search(alice, q, 5)]
                for q in queries
            }

        alone = ranked()
        # Look-alike records of another user: the same words, far more often, longer rows.
        put(
            record_store,
            [rec(bob, "kayak kayak rental " + "kayak trip " * (n % 5), n + 20) for n in range(30)],
        )
        put(record_store, [rec(bob, "fjord trip note, " + "rain " * n, n + 60) for n in range(10)])
        assert all(alone.values()) and ranked() == alone

    def test_keyword_terms_can_be_rewritten(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        (rowid,) = put(record_store, [rec(alice, "parking code")])
        record_store.set_match_terms(rowid, "locker number")
        assert record_store.keyword_search(alice, ["parking"], 5) == []
        assert [r for r, _ in record_store.keyword_search(alice, ["locker"], 5)] == [rowid]
        record_store.set_match_text(rowid, "gym", "question about fitness")
        assert [r for r, _ in record_store.keyword_search(alice, ["fitness"], 5)] == [rowid]

    def test_window_rowids_are_in_time_order(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        rowids = put(record_store, [rec(alice, f"note {n}", n) for n in range(5)])
        found = record_store.window_rowids(alice, since=T0 + timedelta(minutes=1), limit=3)
        assert found == [rowids[4], rowids[3], rowids[2]]

    def test_ties_go_by_row_id(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        """Equal times: the later write first when newest first, else the earlier (stores/ties.py)."""
        alice, _ = users
        records = [rec(alice, f"lease note {n}", m) for n, m in enumerate((0, 1, 1, 1, 1, 1, 2))]
        early, *tied, late = put(record_store, records)
        assert record_store.window_rowids(alice, limit=4) == [late, *tied[::-1][:3]]
        assert record_store.window_rowids(alice, limit=4, newest_first=False) == [early, *tied[:3]]
        since, until = T0 + timedelta(minutes=1), T0 + timedelta(minutes=2)
        assert record_store.window_rowids(alice, since=since, until=until, limit=2) == tied[::-1][:2]
        span = (T0 - timedelta(days=9), T0 - timedelta(days=2))
        record_store.put_grounded_times(alice, dict.fromkeys(tied[1:], span))
        windows, missing = record_store.pointing_times(alice, since=since, until=until, limit=3)
        if "grounded_times" in record_store.capabilities:  # the rows window_rowids takes, oldest first
            assert (windows, missing) == (dict.fromkeys(tied[1:3], span), tied[:1])
        else:
            assert (windows, missing) == ({}, tied[:3])

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

    # -- embeddings

    def test_vectors_of_active_records_only(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        a, b = rec(alice, "one"), rec(alice, "two", 1)
        rowids = put(record_store, [a, b])
        rows = unit_rows(2, DIM, 7)
        record_store.put_vectors(rowids, MODEL, rows)
        assert np.allclose(record_store.vectors_of(alice, MODEL, [a.id])[a.id], rows[0])
        record_store.update([dataclasses.replace(b, status=Status.ARCHIVED)])
        batches = [(u, ids) for u, ids, _ in record_store.iter_active_vectors(MODEL, DIM) if u == alice]
        assert batches == [(alice, [rowids[0]])]
        assert record_store.count_vectors(MODEL, alice) == 1
        missing = {m[2] for m in record_store.rows_missing_vectors("another-model")}
        assert a.id in missing and b.id not in missing

    def test_recent_vectors_are_the_users_newest_ones(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        mine = [rec(alice, f"mine {n}", n) for n in range(4)]
        theirs = [rec(bob, "theirs", 9)]
        rowids = put(record_store, [*mine, *theirs])
        rows = unit_rows(5, DIM, 11)
        record_store.put_vectors(rowids, MODEL, rows)
        record_store.update([dataclasses.replace(mine[3], status=Status.ARCHIVED)])
        recent = record_store.recent_vectors(alice, MODEL, 2)  # newest, archived ones too: the user's texts
        assert recent.shape == (2, DIM)
        assert np.allclose(recent, rows[[3, 2]])
        assert np.allclose(record_store.recent_vectors(alice, MODEL, 10), rows[[3, 2, 1, 0]])  # never bob's
        assert record_store.recent_vectors(alice, "another-model", 10).size == 0

    # -- queue, task state

    def test_the_queue_is_oldest_first_and_can_be_restored(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, _ = users
        records = [rec(alice, f"turn {n}", n) for n in range(3)]
        put(record_store, records)
        record_store.enqueue(records)
        assert [r.id for r in record_store.queued(alice)] == [r.id for r in records]
        assert record_store.queue_size(alice) == 3
        assert record_store.oldest_queued_at(alice) == T0
        entries = record_store.queue_entries(alice, [records[0].id, records[2].id])
        assert sorted(e[0] for e in entries) == sorted([records[0].id, records[2].id])
        record_store.dequeue(alice, [r.id for r in records])
        assert record_store.queue_size(alice) == 0
        assert record_store.requeue(alice, entries) == 2
        assert alice in record_store.dream_users()

    def test_task_state_per_session(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        record_store.set_task_state(alice, "s1", {"goal": "book a trip"}, T0)
        record_store.set_task_state(
            alice, "s2", {"goal": "file taxes", "task_type": "admin"}, T0 + timedelta(1)
        )
        assert record_store.get_task_state(alice, "s1") == {"goal": "book a trip"}
        assert record_store.get_task_state(bob, "s1") == {}
        assert set(record_store.task_states(alice)) == {"s1", "s2"}
        assert record_store.latest_task_state(alice)["goal"] == "file taxes"

    # -- dream log

    def test_the_dream_log(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, bob = users
        ids = [f"dream-{uuid.uuid4().hex}" for _ in range(2)]
        for n, dream_id in enumerate(ids):
            stamp = (T0 + timedelta(hours=n)).isoformat()
            record_store.add_dream(DreamLogRow(dream_id, alice, 1, "test", stamp, stamp, "done", "{}", "{}"))
        assert [r.dream_id for r in record_store.list_dreams(alice, 10)] == ids[::-1]
        assert record_store.list_dreams(bob, 10) == []
        assert record_store.dreams_after(ids[0], alice, "done") == [ids[1]]
        record_store.set_dream_status(ids[1], "undone", T0)
        row = record_store.get_dream(ids[1])
        assert row is not None and row.status == "undone" and json.loads(row.report) == {}
        assert record_store.dream_times(alice, 1) == (T0, T0 + timedelta(hours=1))
        assert record_store.dream_times(alice, 2) == (None, None)
        assert (ids[0], alice) in record_store.dream_ids_with_prefix(ids[0][:12])

    # -- empty again

    def test_empty_again(self, record_store: RecordStore, users: tuple[str, str]) -> None:
        alice, _ = users
        records = [rec(alice, f"memory about lanterns {n}", n) for n in range(4)]
        rowids = put(record_store, records)
        record_store.put_vectors(rowids, MODEL, unit_rows(4, DIM, 8))
        record_store.enqueue(records)
        record_store.dequeue(alice, [r.id for r in records])
        assert sorted(record_store.delete(alice, [r.id for r in records])) == sorted(r.id for r in records)
        assert record_store.count(alice) == 0
        assert record_store.find(alice, statuses=None) == []
        assert record_store.keyword_search(alice, ["lanterns"], 5) == []
        assert record_store.count_vectors(MODEL, alice) == 0
        assert record_store.queue_size(alice) == 0
        assert alice not in record_store.users()
        put(record_store, [rec(alice, "lanterns again")])  # usable again
        assert record_store.count(alice) == 1
