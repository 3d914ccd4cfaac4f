"""Relative dates in a memory, grounded at the memory's own time ("yesterday" said on 8 May is 7 May).

A turn's ``event_time`` is when it was said; what it talks about may lie before it
("we went camping last summer", "我上周去了北京"). A time window in a query ("what did
we do in summer 2022?") then misses the turn if only ``event_time`` is compared. This
module reads the turn's own time expressions with the query parser
(:func:`~dreammem.recall.timeparse.parse_time_query`), relative to the turn's
``event_time``, so the temporal path can also take memories whose *mentioned* time
falls inside the window. Expressions that include the turn's own time ("today",
"this week") add nothing and are dropped.

Grounding a text costs a parse only when :func:`mentions_time` finds a relative
expression; results are cached per memory row (content and event time do not change
under a row id without a new row).
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import UTC, datetime, timedelta

from dreammem.recall.timeparse import TimeWindow, mentions_time, parse_time_query

__all__ = ["GROUNDING_REACH", "GroundedTimes", "grounded_window"]

GROUNDING_REACH = timedelta(days=400)
"""How far from a window a memory may have been said and still point into it: "last
summer", "next month", weeks and days, and most of "last year" (said in December, it
reaches back almost two years)."""


def grounded_window(text: str, said_at: datetime) -> TimeWindow | None:
    """The window a text's time expressions point at, read relative to when it was said.

    Returns ``None`` when the text names no time, or only one that includes ``said_at``.
    """
    if not mentions_time(text):
        return None
    parsed = parse_time_query(text, said_at)
    if parsed is None or parsed.window is None or parsed.window.empty:
        return None
    window = parsed.window
    at = said_at if said_at.tzinfo is not None else said_at.replace(tzinfo=UTC)  # as the parser reads it
    inside = (window.start is None or window.start <= at) and (window.end is None or at < window.end)
    return None if inside else window


class GroundedTimes:
    """A bounded cache of :func:`grounded_window` by memory row id.

    Args:
        capacity: Rows remembered (least recently used ones are dropped).
    """

    def __init__(self, capacity: int = 50_000) -> None:
        self.capacity = capacity
        self._cache: OrderedDict[int, TimeWindow | None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._cache)

    def known(self, rowid: int) -> bool:
        """True when the row's window is cached (its text need not be read again)."""
        return rowid in self._cache

    def cached(self, rowid: int) -> TimeWindow | None:
        """The cached window of a :meth:`known` row (``None``: it points nowhere else).

        Raises:
            KeyError: the row is not cached.
        """
        self._cache.move_to_end(rowid)
        return self._cache[rowid]

    def window(self, rowid: int, text: str, said_at: datetime) -> TimeWindow | None:
        """The grounded window of a row's text (computed once per row)."""
        if rowid in self._cache:
            self._cache.move_to_end(rowid)
            return self._cache[rowid]
        found = grounded_window(text, said_at)
        self._cache[rowid] = found
        if len(self._cache) > self.capacity:
            self._cache.popitem(last=False)
        return found
