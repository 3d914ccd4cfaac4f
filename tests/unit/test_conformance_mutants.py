"""The conformance suites of :mod:`dreammem.testing` catch a backend that breaks the contract.

Each mutant is a real backend (SQLite, FAISS) with one contract violation a new backend
could plausibly ship: a read that ignores the user, a lossy codec, a queue in the wrong
order, a removal that does nothing. The suite test written for that rule must fail on
it, and pass on the real backend, so a backend that passes the suites has been checked.
"""

from __future__ import annotations

import dataclasses
import inspect
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dreammem.errors import BackendError
from dreammem.stores.base import RecordCapability, RecordQuery, RecordStore, TimeSpan, VectorIndex
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.sqlite.user_stats import UserStats
from dreammem.testing import RecordStoreSuite, VectorIndexSuite
from dreammem.types import MemoryRecord

# -- record store mutants


class StringCapabilities(SQLiteRecordStore):
    """Capabilities declared as bare strings, the grounded windows' one misspelt."""

    capabilities = frozenset({"fts", "transactions", "vectors", "queue", "grounded-times"})


class NoQueueDeclared(SQLiteRecordStore):
    """A required role's capability left out of the declaration."""

    capabilities = frozenset(SQLiteRecordStore.capabilities - {RecordCapability.QUEUE})


class LeakyGet(SQLiteRecordStore):
    """``get`` finds records of any user."""

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        found: list[MemoryRecord] = []
        for user in self.users():
            found += super().get(user, ids)
        return found


class LossyCodec(SQLiteRecordStore):
    """Metadata does not survive the round trip."""

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        return [dataclasses.replace(r, metadata={}) for r in super().get(user_id, ids)]


class SpeakerlessGet(SQLiteRecordStore):
    """The speaker does not survive the round trip (a backend without the field)."""

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        return [dataclasses.replace(r, speaker=None) for r in super().get(user_id, ids)]


class NotesInMetadata(SQLiteRecordStore):
    """The library's notes come back inside the caller's metadata (the layout before schema 17)."""

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        return [
            dataclasses.replace(r, metadata={**r.metadata, **r.system}, system={})
            for r in super().get(user_id, ids)
        ]


class KeysFromMetadata(SQLiteRecordStore):
    """Message keys are looked up in the caller's metadata (the look-up before schema 18)."""

    def existing_message_keys(self, user_id: str, session_id: str | None, keys: Sequence[str]) -> set[str]:
        clause = "session_id IS ?" if session_id is None else "session_id = ?"
        rows = self.fetchall(
            f"SELECT json_extract(metadata, '$.message_key') FROM records WHERE user_id = ? AND {clause} "
            f"AND json_extract(metadata, '$.message_key') IN ({', '.join('?' * len(keys))})",
            (user_id, session_id, *keys),
        )
        return {str(r[0]) for r in rows}


class StorageOrder(SQLiteRecordStore):
    """``get`` answers in storage order, not in the order asked."""

    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        return sorted(super().get(user_id, ids), key=lambda r: r.created_at)


class EveryStatus(SQLiteRecordStore):
    """``find`` ignores the status filter (archived records come back)."""

    def find(self, user_id: str, **filters: Any) -> list[MemoryRecord]:
        return super().find(user_id, **{**filters, "statuses": None})


class NewestQueuedFirst(SQLiteRecordStore):
    """The dream queue comes newest first."""

    def queued(self, user_id: str, limit: int | None = None) -> list[MemoryRecord]:
        return list(reversed(super().queued(user_id, limit)))


class SilentUpdate(SQLiteRecordStore):
    """An update of a record that is not there is ignored instead of refused."""

    def update(self, records: Sequence[MemoryRecord]) -> None:
        try:
            super().update(records)
        except BackendError:
            pass


class KeepsRecordsOfErasedUsers(SQLiteRecordStore):
    """Erasing a user deletes nothing."""

    def erase_user(self, user_id: str) -> int:
        return len(self.find(user_id, statuses=None))


class TimesOfAnyUser(SQLiteRecordStore):
    """Grounded times are read by row id alone, whoever the row belongs to."""

    def grounded_times(self, user_id: str, rowids: Sequence[int]) -> dict[int, TimeSpan | None]:
        found: dict[int, TimeSpan | None] = {}
        for user in self.users():
            found.update(super().grounded_times(user, rowids))
        return found


class StaleTimes(SQLiteRecordStore):
    """A new text keeps the window its old text pointed at."""

    def update(self, records: Sequence[MemoryRecord]) -> None:
        kept = {}
        for record in records:
            rowid = self.rowids(record.user_id, [record.id]).get(record.id)
            if rowid is not None:
                kept[(record.user_id, rowid)] = self.grounded_times(record.user_id, [rowid])
        super().update(records)
        for (user_id, _), times in kept.items():
            self.put_grounded_times(user_id, times)


class NeighboursAcrossUsers(SQLiteRecordStore):
    """Session neighbours are read for any user's rows."""

    def session_neighbours(
        self, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        found: dict[int, tuple[int | None, int | None]] = {}
        for user in self.users():
            found.update(super().session_neighbours(user, rowids))
        return found


class NeighboursBothWays(SQLiteRecordStore):
    """The previous and the next turn are swapped."""

    def session_neighbours(
        self, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        return {
            r: (after, before) for r, (before, after) in super().session_neighbours(user_id, rowids).items()
        }


class TextsOfEveryStatus(SQLiteRecordStore):
    """Texts come back for archived records too (the speaker path would rank them)."""

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        return {i: r.content for i, r in self.get_by_rowids(user_id, rowids).items()}


class PointsFromEveryStatus(SQLiteRecordStore):
    """Rows said in a window point into others whatever their status (archived ones too)."""

    def pointing_times(
        self, user_id: str, *, since: datetime | None, until: datetime | None, limit: int
    ) -> tuple[dict[int, TimeSpan], list[int]]:
        said = [
            r.id
            for r in self.find(user_id, statuses=None, newest_first=False)
            if (since is None or r.event_time >= since) and (until is None or r.event_time < until)
        ][:limit]
        found = self.rowids(user_id, said)
        rowids = [found[i] for i in said]
        stored = self.grounded_times(user_id, rowids)
        return {i: s for i, s in stored.items() if s is not None}, [i for i in rowids if i not in stored]


class WindowTiesInStorageOrder(SQLiteRecordStore):
    """Equal times in a window come earlier write first, newest first too (storage order, sorted stably)."""

    def window_rowids(
        self,
        user_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        newest_first: bool = True,
    ) -> list[int]:
        rowids = sorted(super().window_rowids(user_id, since=since, until=until, limit=1_000_000))
        times = {i: r.event_time for i, r in self.get_by_rowids(user_id, rowids).items()}
        return sorted(rowids, key=lambda i: times[i], reverse=newest_first)[:limit]


class IndexWideKeywordStatistics(SQLiteRecordStore):
    """Every user is ranked with the whole index's statistics (FTS5's bm25() as is, before item 11)."""

    def user_keyword_stats(self, user_id: str) -> tuple[UserStats | None, bool]:
        stats, _ = super().user_keyword_stats(user_id)
        return stats, True


class PointingTiesNewestFirst(SQLiteRecordStore):
    """Rows said at the same time are taken newest write first when a window holds too many."""

    def pointing_times(
        self, user_id: str, *, since: datetime | None, until: datetime | None, limit: int
    ) -> tuple[dict[int, TimeSpan], list[int]]:
        every = self.window_rowids(user_id, since=since, until=until, limit=1_000_000, newest_first=False)
        times = {i: r.event_time for i, r in self.get_by_rowids(user_id, every).items()}
        taken = sorted(every, key=lambda i: (times[i], -i))[:limit]
        stored = self.grounded_times(user_id, taken)
        return {i: s for i, s in stored.items() if s is not None}, [i for i in taken if i not in stored]


class OneShapeForAll(SQLiteRecordStore):
    """``find_many`` answers every query with the first query's filters (a batch that mixed them up)."""

    def find_many(self, queries: Sequence[RecordQuery]) -> list[list[MemoryRecord]]:
        return super().find_many([dataclasses.replace(queries[0], user_id=q.user_id) for q in queries])


RECORD_MUTANTS: list[tuple[type[SQLiteRecordStore], str]] = [
    (StringCapabilities, "test_capabilities_are_typed_and_name_the_required_roles"),
    (NoQueueDeclared, "test_capabilities_are_typed_and_name_the_required_roles"),
    (LeakyGet, "test_every_read_is_scoped_to_its_user"),
    (OneShapeForAll, "test_find_many_answers_each_query_as_find_does"),
    (LossyCodec, "test_a_record_comes_back_equal"),
    (SpeakerlessGet, "test_a_speaker_comes_back_and_an_update_keeps_it"),
    (NotesInMetadata, "test_system_notes_are_stored_apart_from_the_callers_metadata"),
    (KeysFromMetadata, "test_message_keys_are_found_in_the_system_notes_only"),
    (StorageOrder, "test_reads_keep_the_order_asked_and_skip_missing"),
    (EveryStatus, "test_update_changes_status_and_a_missing_record_fails"),
    (NewestQueuedFirst, "test_the_queue_is_oldest_first_and_can_be_restored"),
    (SilentUpdate, "test_update_changes_status_and_a_missing_record_fails"),
    (KeepsRecordsOfErasedUsers, "test_erasure_leaves_no_row_behind"),
    (TimesOfAnyUser, "test_grounded_times_follow_their_records"),
    (StaleTimes, "test_grounded_times_follow_their_records"),
    (NeighboursAcrossUsers, "test_session_neighbours_follow_the_session_order"),
    (NeighboursBothWays, "test_session_neighbours_follow_the_session_order"),
    (TextsOfEveryStatus, "test_active_texts_are_this_users_active_records"),
    (PointsFromEveryStatus, "test_pointing_times_are_the_windows_said_in_a_window"),
    (WindowTiesInStorageOrder, "test_ties_go_by_row_id"),
    (PointingTiesNewestFirst, "test_ties_go_by_row_id"),
    (IndexWideKeywordStatistics, "test_a_users_keyword_ranking_does_not_move_with_other_users_records"),
]


def _users() -> tuple[str, str]:
    return (f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}")


def _run_record_test(store: RecordStore, name: str) -> None:
    test = getattr(RecordStoreSuite(), name)
    test(*(store, _users())[: len(inspect.signature(test).parameters)])


@pytest.mark.parametrize(("mutant", "test"), RECORD_MUTANTS, ids=lambda v: getattr(v, "__name__", v))
def test_the_record_store_suite_fails_a_mutant(
    tmp_path: Path, mutant: type[SQLiteRecordStore], test: str
) -> None:
    store = mutant(tmp_path / "mutant.db")
    try:
        with pytest.raises((AssertionError, pytest.fail.Exception)):
            _run_record_test(store, test)
    finally:
        store.close()


@pytest.mark.parametrize("test", sorted({t for _, t in RECORD_MUTANTS}))
def test_the_same_suite_tests_pass_on_the_real_store(tmp_path: Path, test: str) -> None:
    store = SQLiteRecordStore(tmp_path / "real.db")
    try:
        _run_record_test(store, test)
    finally:
        store.close()


# -- vector index mutants

Vector = npt.NDArray[np.float32]


class SearchesEveryone(FaissVectorIndex):
    """``search`` ranks every user's vectors."""

    def search(self, user_id: str, query: Vector, k: int) -> list[tuple[int, float]]:
        found: list[tuple[int, float]] = []
        for user in self.counts():
            found += super().search(user, query, k)
        return sorted(found, key=lambda hit: -hit[1])[:k]


class NeverRemoves(FaissVectorIndex):
    """``remove`` does nothing."""

    def remove(self, ids: Sequence[int]) -> None:
        return None


class IgnoresTheSubset(FaissVectorIndex):
    """``search_subset`` ranks every vector of the user."""

    def search_subset(
        self, user_id: str, query: Vector, ids: Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        return self.search(user_id, query, k)


class NeverResets(FaissVectorIndex):
    """``reset`` keeps everything."""

    def reset(self) -> None:
        return None


class NewestOfEqualsFirst(FaissVectorIndex):
    """Equal scores go higher row id first."""

    def search(self, user_id: str, query: Vector, k: int) -> list[tuple[int, float]]:
        return sorted(super().search(user_id, query, k), key=lambda hit: (-hit[1], -hit[0]))


class StopsAtItsFetch(FaissVectorIndex):
    """Ranks only the first 64 vectors added (an over-fetch that never looks past a tie at its end)."""

    def __init__(self, dim: int, path: Path | None) -> None:
        super().__init__(dim, path)
        self.added: list[int] = []

    def add(self, user_id: str, ids: Sequence[int], vectors: Vector) -> None:
        self.added.extend(int(i) for i in ids)
        super().add(user_id, ids, vectors)

    def search(self, user_id: str, query: Vector, k: int) -> list[tuple[int, float]]:
        met = set(self.added[:64])
        return [hit for hit in super().search(user_id, query, self.count(user_id)) if hit[0] in met][:k]


VECTOR_MUTANTS: list[tuple[Callable[[int, Path | None], VectorIndex], str]] = [
    (SearchesEveryone, "test_search_stays_inside_the_user"),
    (NeverRemoves, "test_removed_ids_are_gone_and_unknown_ids_ignored"),
    (NeverRemoves, "test_empty_again"),
    (IgnoresTheSubset, "test_search_subset_ranks_only_the_given_ids"),
    (NeverResets, "test_empty_again"),
    (NewestOfEqualsFirst, "test_equal_scores_go_lower_row_id_first"),
    (StopsAtItsFetch, "test_a_tie_longer_than_any_over_fetch_still_goes_lower_row_id_first"),
]


def _run_vector_test(index: VectorIndex, name: str) -> None:
    getattr(VectorIndexSuite(), name)(index, _users())


@pytest.mark.parametrize(("mutant", "test"), VECTOR_MUTANTS, ids=lambda v: getattr(v, "__name__", v))
def test_the_vector_index_suite_fails_a_mutant(
    tmp_path: Path, mutant: Callable[[int, Path | None], VectorIndex], test: str
) -> None:
    index = mutant(VectorIndexSuite.dim, tmp_path / "mutant.faiss")
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        _run_vector_test(index, test)


@pytest.mark.parametrize("test", sorted({t for _, t in VECTOR_MUTANTS}))
def test_the_same_vector_tests_pass_on_the_real_index(tmp_path: Path, test: str) -> None:
    _run_vector_test(FaissVectorIndex(VectorIndexSuite.dim, tmp_path / "real.faiss"), test)


def test_every_rule_of_both_suites_has_a_mutant_or_is_listed_as_not_yet() -> None:
    """A new suite test either gets a mutant above or is named here (so the gap is visible)."""
    not_yet = {
        "test_a_failed_transaction_leaves_nothing",
        "test_keyword_search_finds_active_records_only",
        "test_find_filters_and_orders_by_event_time",
        "test_history_follows_supersede_links",
        "test_superseded_by_any_finds_direct_predecessors_of_this_user",
        "test_find_pages_with_an_offset",
        "test_twins_and_derived_records",
        "test_filter_rowids_by_columns",
        "test_ids_in_use_across_users",
        "test_keyword_search_matches_word_forms_and_diacritics",
        "test_a_term_no_record_holds_does_not_hide_the_rows_holding_every_other",
        "test_keyword_terms_can_be_rewritten",
        "test_window_rowids_are_in_time_order",
        "test_vectors_of_active_records_only",
        "test_recent_vectors_are_the_users_newest_ones",
        "test_task_state_per_session",
        "test_the_dream_log",
        "test_empty_again",
        "test_dimension_is_declared",
        "test_a_vector_finds_itself_first",
        "test_adding_an_id_again_replaces_it",
    }
    suites = [RecordStoreSuite, VectorIndexSuite]
    rules = {name for suite in suites for name in dir(suite) if name.startswith("test_")}
    covered = {t for _, t in RECORD_MUTANTS} | {t for _, t in VECTOR_MUTANTS}
    assert rules - covered == not_yet - covered
