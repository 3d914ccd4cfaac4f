"""The erasure role: hard deletes that leave no copy of a record's content behind."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

__all__ = ["Erasure"]


class Erasure(ABC):
    """Erasure on request: records, users, and the bytes they left in the store's files."""

    @abstractmethod
    def erase_records(self, user_id: str, ids: Sequence[str], texts: Sequence[str]) -> tuple[list[str], int]:
        """Hard-delete these records, every row naming them, and their quotes in the dream log.

        Returns the ids that existed and how many dream-log entries were rewritten.
        """

    @abstractmethod
    def erase_user(self, user_id: str) -> int:
        """Hard-delete every row of this user the store owns; returns the dream-log entries deleted."""

    @abstractmethod
    def compact(self) -> bool:
        """Make the store drop the bytes of erased rows; False when it must be called again later."""
