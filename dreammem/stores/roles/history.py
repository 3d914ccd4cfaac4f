"""The history role: how records follow from one another (supersede chains, twins, provenance)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from dreammem.types import MemoryRecord

__all__ = ["RecordHistory"]


class RecordHistory(ABC):
    """Records linked to others by slot, ``superseded_by`` or provenance."""

    @abstractmethod
    def history_chain(self, user_id: str, record_id: str) -> list[MemoryRecord]:
        """Every record of the same slot or supersede chain as this one, oldest first."""

    @abstractmethod
    def twins(self, record: MemoryRecord) -> list[MemoryRecord]:
        """Records with the same text linked to this one by provenance (either way)."""

    def twins_many(self, records: Sequence[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
        """:meth:`twins` of each record (each in its own user's scope), by record id.

        A backend that can read them all at once overrides this (the write path asks
        for the twins of every record a write's decisions touch).
        """
        return {r.id: self.twins(r) for r in records}

    @abstractmethod
    def twins_of(self, user_id: str, records: Sequence[MemoryRecord]) -> dict[str, str]:
        """For each of these records that has a twin (see :meth:`twins`), the twin's id."""

    @abstractmethod
    def derived_from(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user whose provenance names any of these ids."""

    @abstractmethod
    def superseded_by_any(self, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Records of this user that one of these records directly superseded."""
