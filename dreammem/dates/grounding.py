"""Relative dates in a memory, grounded at the memory's own time ("yesterday" said on 8 May is 7 May).

A turn's ``event_time`` is when it was said; what it talks about may lie before it
("we went camping last summer", "我上周去了北京"). A time window in a query ("what did
we do in summer 2022?") then misses the turn if only ``event_time`` is compared. This
module reads the turn's own time expressions with the query parser
(:func:`~dreammem.dates.parse.parse_time_query`), relative to the turn's
``event_time``, so the temporal path can also take memories whose *mentioned* time
falls inside the window. Expressions that include the turn's own time ("today",
"this week") add nothing and are dropped.

Grounding a text costs a parse only when :func:`mentions_time` finds a relative
expression, and a common English one ("yesterday", "last week", "two days ago") is read
without dateparser (:mod:`dreammem.dates.words`). Each record is grounded once:
the write path stores the window with the record (:func:`ground_records`, in the
write's transaction), and a record without one (an older store, a changed text) is
grounded on first use and written back (:class:`GroundedTimes`). A store without the
``grounded_times`` capability keeps the windows in a per-process cache instead, keyed by
the record's text and time, so an edit (in any process) is grounded again.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from dreammem.dates.parse import TimeWindow, mentions_time, parse_time_query
from dreammem.errors import BackendError
from dreammem.stores.base import RecordCapability, RecordStore, TimeSpan
from dreammem.types import MemoryRecord

__all__ = ["GROUNDING_REACH", "GroundedTimes", "ground_records", "grounded_window"]

log = logging.getLogger(__name__)

GROUNDING_REACH = timedelta(days=400)
"""How far from a window a memory may have been said and still point into it: "last
summer", "next month", weeks and days, and most of "last year" (said in December, it
reaches back almost two years)."""


def grounded_window(text: str, said_at: datetime, *, common_forms: bool = True) -> TimeWindow | None:
    """The window a text's time expressions point at, read relative to when it was said.

    Args:
        text: The memory's text.
        said_at: When it was said (naive means UTC).
        common_forms: Read common English relative dates without dateparser
            (dateparser's windows where it reads them, :mod:`dreammem.dates.words`);
            False asks dateparser about every time word (checks).

    Returns:
        ``None`` when the text names no time, or only one that includes ``said_at``.
    """
    if not mentions_time(text):
        return None
    parsed = parse_time_query(text, said_at, common_forms=common_forms, side_words=True)
    if parsed is None or parsed.window is None or parsed.window.empty:
        return None
    window = parsed.window
    at = said_at if said_at.tzinfo is not None else said_at.replace(tzinfo=UTC)  # as the parser reads it
    inside = (window.start is None or window.start <= at) and (window.end is None or at < window.end)
    return None if inside else window


def ground_records(store: RecordStore, records: Sequence[MemoryRecord], rowids: Sequence[int]) -> None:
    """Store the grounded window of each new record (inside the write's transaction).

    A store without the ``grounded_times`` capability is left alone.
    """
    if RecordCapability.GROUNDED_TIMES not in store.capabilities:
        return
    by_user: dict[str, dict[int, TimeSpan | None]] = {}
    windows: dict[tuple[str, str], TimeWindow | None] = {}  # a turn and its semantic twin: one parse
    for record, rowid in zip(records, rowids, strict=True):
        said = (record.content, record.event_time.isoformat())  # the offset too: it moves "yesterday"
        if said not in windows:
            windows[said] = grounded_window(record.content, record.event_time)
        by_user.setdefault(record.user_id, {})[rowid] = _span(windows[said])
    for user_id, times in by_user.items():
        store.put_grounded_times(user_id, times)


def _span(window: TimeWindow | None) -> TimeSpan | None:
    return None if window is None else (window.start, window.end)


class GroundedTimes:
    """The grounded windows of a store's rows: stored with the records, or cached here.

    With the store's ``grounded_times`` capability the windows live in the store (written
    at write time; a row without one is grounded on first use and written back), so
    every process shares them. Without it they are kept here, per process, under the
    row's text and time (:func:`_version`): a row edited since, here or in another
    process sharing the store, misses the cache and is grounded again.

    Args:
        store: The record store.
        capacity: Rows remembered in the per-process cache (least recently used dropped).
    """

    def __init__(self, store: RecordStore, capacity: int = 50_000) -> None:
        self._store = store
        self._stored = RecordCapability.GROUNDED_TIMES in store.capabilities
        self.capacity = capacity
        self._cache: OrderedDict[tuple[int, int], TimeWindow | None] = OrderedDict()

    def __len__(self) -> int:
        """Rows in the per-process cache."""
        return len(self._cache)

    def known(self, records: Mapping[int, MemoryRecord]) -> dict[int, TimeWindow | None]:
        """The cached windows of these rows as they are now (``None``: points nowhere else)."""
        found: dict[int, TimeWindow | None] = {}
        for rowid, record in records.items():
            key = _version(rowid, record)
            if key in self._cache:
                self._cache.move_to_end(key)
                found[rowid] = self._cache[key]
        return found

    def said_between(
        self, user_id: str, window: TimeWindow, limit: int
    ) -> tuple[dict[int, TimeWindow], list[int]]:
        """The ``limit`` oldest rows said inside ``window``, by their grounded windows.

        Returns the windows that point somewhere, and the rows not grounded yet (the
        cache grounds its rows here: it reads them anyway, to see their text and time).
        """
        if self._stored:
            spans, missing = self._store.pointing_times(
                user_id, since=window.start, until=window.end, limit=limit
            )
            return {rowid: TimeWindow(*span) for rowid, span in spans.items()}, missing
        rowids = self._store.window_rowids(
            user_id, since=window.start, until=window.end, limit=limit, newest_first=False
        )
        records = self._store.get_by_rowids(user_id, rowids)
        windows = self.known(records)
        windows.update(self.ground(user_id, {i: r for i, r in records.items() if i not in windows}))
        return {rowid: w for rowid, w in windows.items() if w is not None}, []

    def ground(self, user_id: str, records: Mapping[int, MemoryRecord]) -> dict[int, TimeWindow | None]:
        """Ground rows not grounded yet and keep their windows; returns them."""
        windows = {rowid: grounded_window(r.content, r.event_time) for rowid, r in records.items()}
        if self._stored:
            try:
                self._store.put_grounded_times(user_id, {i: _span(w) for i, w in windows.items()})
            except BackendError as exc:  # a busy or read-only file: ground them again next time
                log.warning("could not store %d grounded windows (%s)", len(windows), exc)
            return windows
        for rowid, window in windows.items():
            self._cache[_version(rowid, records[rowid])] = window
            if len(self._cache) > self.capacity:
                self._cache.popitem(last=False)
        return windows


def _version(rowid: int, record: MemoryRecord) -> tuple[int, int]:
    """The cache key of a row: its id and what its window depends on (its text and time)."""
    return rowid, hash((record.content, record.event_time))
