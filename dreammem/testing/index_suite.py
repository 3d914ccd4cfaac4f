"""Conformance of the index roles: keyword search, time windows and grounded times, stored embeddings."""

from __future__ import annotations

import dataclasses
import uuid
from datetime import timedelta

import numpy as np

from dreammem.stores.base import RecordCapability, RecordStore
from dreammem.testing.records import T0, put, rec
from dreammem.testing.role_suite import DIM, MODEL, RoleSuite
from dreammem.testing.vector_index_suite import unit_rows
from dreammem.types import Status

__all__ = ["KeywordIndexSuite", "StoredEmbeddingsSuite", "TimeIndexSuite"]


class KeywordIndexSuite(RoleSuite):
    """The ``KeywordIndex`` role: BM25 over active records, word forms, rewritten terms."""

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
        kayaks = [rec(bob, "kayak kayak rental " + "kayak trip " * (n % 5), n + 20) for n in range(30)]
        put(record_store, kayaks)
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


class TimeIndexSuite(RoleSuite):
    """The ``TimeIndex`` role: time windows, their ties, and the optional grounded windows."""

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
        if RecordCapability.GROUNDED_TIMES in record_store.capabilities:  # window_rowids' rows, oldest first
            assert (windows, missing) == (dict.fromkeys(tied[1:3], span), tied[:1])
        else:
            assert (windows, missing) == ({}, tied[:3])

    def test_grounded_times_follow_their_records(
        self, record_store: RecordStore, users: tuple[str, str]
    ) -> None:
        alice, bob = users
        said, tea, other = rec(alice, "hiked yesterday"), rec(alice, "likes tea", 1), rec(bob, "bob's", 2)
        rowids = put(record_store, [said, tea, other])
        span = (T0 - timedelta(days=1), T0)
        record_store.put_grounded_times(alice, {rowids[0]: span, rowids[1]: None, rowids[2]: span})
        stored = record_store.grounded_times(alice, rowids)
        if RecordCapability.GROUNDED_TIMES not in record_store.capabilities:
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
        if RecordCapability.GROUNDED_TIMES not in record_store.capabilities:
            assert found == ({}, rowids[:3])  # none kept: every active row said in it is not grounded yet
            return
        assert found == ({rowids[0]: span}, [rowids[2]])
        assert record_store.pointing_times(alice, since=T0, until=until, limit=1) == ({rowids[0]: span}, [])
        assert record_store.pointing_times(bob, since=T0, until=until, limit=10) == ({}, [rowids[5]])
        _, missing = record_store.pointing_times(alice, since=None, until=None, limit=10)
        assert missing == [rowids[2], rowids[4]]


class StoredEmbeddingsSuite(RoleSuite):
    """The ``StoredEmbeddings`` role: embeddings of active records, by model and user."""

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
