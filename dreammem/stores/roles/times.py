"""The times role: records by event time, and the windows their relative dates point at."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from datetime import datetime

__all__ = ["TimeIndex", "TimeSpan"]

TimeSpan = tuple[datetime | None, datetime | None]
"""A half-open window ``[start, end)`` of event times a record's own dates point at (``None``: open)."""


class TimeIndex(ABC):
    """Time windows over a user's active records.

    :meth:`window_rowids` is required. The grounded windows are optional (capability
    ``GROUNDED_TIMES``): without it a backend keeps none, and these defaults say so.
    """

    @abstractmethod
    def window_rowids(
        self,
        user_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        newest_first: bool = True,
    ) -> list[int]:
        """Row ids of this user's active records with ``since <= event_time < until``.

        In time order, newest first unless asked otherwise; equal times by row id in the
        same direction (:mod:`dreammem.stores.ties`).
        """

    def grounded_times(self, user_id: str, rowids: Sequence[int]) -> dict[int, TimeSpan | None]:
        """Stored windows of these rows' relative dates (``None``: points nowhere else).

        Rows not grounded yet are left out. A changed text or time drops the row's window.
        """
        return {}

    def put_grounded_times(self, user_id: str, times: Mapping[int, TimeSpan | None]) -> None:
        """Store the windows of rows of this user (rows of other users are skipped)."""
        return None

    def pointing_times(
        self, user_id: str, *, since: datetime | None, until: datetime | None, limit: int
    ) -> tuple[dict[int, TimeSpan], list[int]]:
        """The ``limit`` oldest active rows of this user said in ``[since, until)``, by their windows.

        Returns the stored windows that point somewhere, and the rows not grounded yet (in
        time order); rows whose dates point nowhere else are left out. Without the
        capability every row is not grounded yet.
        """
        return {}, self.window_rowids(user_id, since=since, until=until, limit=limit, newest_first=False)
