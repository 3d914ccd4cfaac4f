"""The records roles: reading records of a user (by id, by what they hold), and writing them."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from dreammem.types import Kind, Layer, MemoryRecord, Status

if TYPE_CHECKING:
    from dreammem.stores.surroundings import Surroundings

__all__ = ["RecordLookups", "RecordQuery", "RecordReads", "RecordWrites"]


@dataclass(frozen=True, slots=True)
class RecordQuery:
    """One :meth:`RecordReads.find` call as a value: its user and filters (the same defaults)."""

    user_id: str
    statuses: Sequence[Status] | None = (Status.ACTIVE,)
    layers: Sequence[Layer] | None = None
    kinds: Sequence[Kind] | None = None
    slot: str | None = None
    slot_prefix: str | None = None
    session_id: str | None = None
    pinned: bool | None = None
    since: datetime | None = None
    until: datetime | None = None
    newest_first: bool = True
    limit: int | None = None
    offset: int = 0


class RecordReads(ABC):
    """Reads of records by id, scoped by user; row ids (``int``) are the ids of the vector index."""

    @abstractmethod
    def get(self, user_id: str, ids: Sequence[str], *, for_update: bool = False) -> list[MemoryRecord]:
        """Records of this user with these ids, in the order asked (missing ids skipped).

        With ``for_update``, inside :meth:`transaction`, no other writer can change these
        records until the transaction ends: a read-modify-write reads what it changes this way.
        """

    @abstractmethod
    def ids_with_prefix(self, user_id: str, prefix: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` record ids of this user starting with ``prefix`` (any status)."""

    @abstractmethod
    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id."""

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The text of each active record of this user among these row ids (others left out).

        A recall path that reads only what the records say: a backend overrides this to
        skip decoding whole records.
        """
        return {i: r.content for i, r in self.get_by_rowids(user_id, rowids).items() if r.is_active}

    @abstractmethod
    def rowids(self, user_id: str, ids: Sequence[str]) -> dict[str, int]:
        """Row ids of this user's records by record id."""

    @abstractmethod
    def ids_in_use(self, ids: Sequence[str]) -> set[str]:
        """Which of these record ids are taken, by any user (ids are unique in a store)."""

    @abstractmethod
    def existing_message_keys(self, user_id: str, session_id: str | None, keys: Sequence[str]) -> set[str]:
        """Which of these adapter message keys (``system["message_key"]``) are stored."""

    @abstractmethod
    def count(self, user_id: str | None = None, *, status: Status | None = None) -> int:
        """How many records (of one user, of one status)."""

    @abstractmethod
    def slots(self, prefix: str) -> list[str]:
        """Distinct slots of active records, across users, starting with ``prefix``."""

    @abstractmethod
    def users(self) -> list[str]:
        """Every user id with at least one record."""


class RecordLookups(ABC):
    """Reads of a user's records by what they hold: filters, session neighbours, a recall's surroundings."""

    @abstractmethod
    def find(
        self,
        user_id: str,
        *,
        statuses: Sequence[Status] | None = (Status.ACTIVE,),
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        slot: str | None = None,
        slot_prefix: str | None = None,
        session_id: str | None = None,
        pinned: bool | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        newest_first: bool = True,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[MemoryRecord]:
        """Records of this user matching every given filter, ordered by event time.

        ``offset`` skips that many of them first (paging).
        """

    def find_many(self, queries: Sequence[RecordQuery]) -> list[list[MemoryRecord]]:
        """:meth:`find` for each query, in order.

        The write path asks many small questions of one batch at once (each new turn's
        session context, the turns after each replaced statement); the default asks them
        one by one, a backend that can answer them together overrides it.
        """
        return [
            self.find(
                q.user_id,
                statuses=q.statuses,
                layers=q.layers,
                kinds=q.kinds,
                slot=q.slot,
                slot_prefix=q.slot_prefix,
                session_id=q.session_id,
                pinned=q.pinned,
                since=q.since,
                until=q.until,
                newest_first=q.newest_first,
                limit=q.limit,
                offset=q.offset,
            )
            for q in queries
        ]

    @abstractmethod
    def session_neighbours(
        self, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        """``{rowid: (previous, next)}``: the active turns around each active session turn of these rows."""

    @abstractmethod
    def surroundings(
        self, user_id: str, rowids: Sequence[int], seeds: Sequence[int], *, pinned: bool
    ) -> Surroundings:
        """What a recall reads about these candidates (records, ``seeds``' neighbours, ...), at once.

        :class:`~dreammem.stores.base.RecordStore` has a default that makes the single reads; a
        store declaring ``RecordCapability.GATHERED_READS`` answers in one round trip.
        """

    @abstractmethod
    def filter_rowids(
        self,
        user_id: str,
        *,
        agent_id: str | None = None,
        session_id: str | None = None,
        layers: Sequence[Layer] | None = None,
        kinds: Sequence[Kind] | None = None,
        limit: int,
    ) -> set[int] | None:
        """Row ids of this user's active records with these column values (None: over ``limit``)."""


class RecordWrites(ABC):
    """Writes of records; made inside a transaction, they commit or roll back together."""

    @abstractmethod
    def insert(
        self,
        records: Sequence[MemoryRecord],
        match_texts: Sequence[str],
        contexts: Sequence[str] | None = None,
    ) -> list[int]:
        """Insert records with their keyword terms (and context terms); returns their row ids."""

    @abstractmethod
    def update(self, records: Sequence[MemoryRecord]) -> None:
        """Write the mutable fields of existing records (``BackendError`` if one is missing)."""

    @abstractmethod
    def delete(self, user_id: str, ids: Sequence[str]) -> list[str]:
        """Delete records outright with their keyword rows (undo only); returns the ids that existed."""

    @abstractmethod
    def touch(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """Record that recall returned these records (access time and count)."""

    def touch_soon(self, user_id: str, ids: Sequence[str], at: datetime) -> None:
        """:meth:`touch`, possibly written after returning (never lost: closing the store writes it).

        Recall records its hits' accesses this way, off its critical path where the store can.
        The default writes it now.
        """
        self.touch(user_id, ids, at)
