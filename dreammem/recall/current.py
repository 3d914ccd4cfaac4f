"""The current value first: newer memories about the same subject lead, older ones are marked.

When the write path is not sure enough to supersede an older memory (both stay
active), it records on the older one the ids of the newer memories that may replace
it (``possibly_outdated_by``, :mod:`dreammem.write.relations`). Recall then:

* puts the latest of the newer memories it points at that are still active right before
  the older hit, newest first, each after its own latest replacements (fetching them when
  no path found them, so the current value is shown whenever an earlier one is). The
  latest are those no other of them points at: someone who moved three times marks the
  first statement with all three later ones, and each of those with the ones after it;
  only the last leads, the cities between are history, shown only as hits of their own;
* marks the older hit (:attr:`Hit.outdated_by`), so the memory block says
  ``[earlier, possibly outdated]``.

Only the hits a recall can show are ordered so (``shown``, the recall's ``k``): the rest
follow as they ranked. A statement restated often is marked by every later restatement,
each of those by the ones after it, and reading all those records for hits below the cut
cost a recall up to 30 ms on one user's 3,000 turns (docs/BENCHMARKS.md, session 18).

A newer id that is no longer active (forgotten, itself superseded) does not count.
Lookups are scoped to the recalling user, so another user's record never enters.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from dreammem.recall.result import Hit
from dreammem.types import MemoryRecord
from dreammem.write.relations import possibly_outdated_by

__all__ = ["CURRENT_PATHS", "current_first", "newer_ids"]

CURRENT_PATHS = ("current",)
"""``Hit.paths`` of a newer memory recall added because an older hit pointed at it."""

_MAX_DEPTH = 5
"""Longest chain of "possibly outdated by" links followed from one hit."""


def newer_ids(hits: Sequence[Hit], marks: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The ids the hits point at as possibly newer (to fetch in one lookup)."""
    found = (i for h in hits for i in _marks(h.record, marks))
    return list(dict.fromkeys(found))


def _marks(record: MemoryRecord, marks: Mapping[str, Sequence[str]] | None) -> tuple[str, ...]:
    own = possibly_outdated_by(record)
    extra = marks.get(record.id) if marks else None
    if not extra:  # most records: no mark, or one (nothing to deduplicate)
        return own if len(own) < 2 else tuple(dict.fromkeys(own))
    return tuple(dict.fromkeys((*own, *extra)))


def current_first(
    hits: Sequence[Hit],
    fetch: Callable[[Sequence[str]], Mapping[str, MemoryRecord]],
    marks: Mapping[str, Sequence[str]] | None = None,
    aliases: Mapping[str, str] | None = None,
    *,
    shown: int | None = None,
) -> list[Hit]:
    """The hits with each older one preceded by its latest active replacements (newest first) and marked.

    The latest replacements of a hit are the active records it points at as possibly newer
    that none of the others points at; each is placed the same way (chains are followed up
    to :data:`_MAX_DEPTH` links). The replacements between lead nothing; they come at their
    own rank when they are hits. ``outdated_by`` lists all of the hit's active newer records.

    Args:
        hits: Ranked hits, best first.
        fetch: This user's records by id (only active ones are used).
        marks: More "possibly outdated by" ids per hit id (those of a same-text twin the
            hit stands for: a turn and the fact written from it say the same thing).
        aliases: The hit id each same-text twin stands for: a newer memory that is a
            hit's twin moves that hit forward instead of showing the same text twice.
        shown: How many hits the caller can show (None: all). The first ``shown`` hits are
            placed as above, each after its replacements; the hits not placed by then follow
            in their order, unmarked. The first ``shown`` of the result are those of ordering
            every hit.
    """
    if not newer_ids(hits if shown is None else hits[:shown], marks):
        return list(hits)
    by_id = {h.id: h for h in hits}
    by_id.update(
        (twin, by_id[hit]) for twin, hit in (aliases or {}).items() if hit in by_id and twin not in by_id
    )
    placing = _Placing(fetch, marks, by_id, shown)
    for hit in hits:
        if placing.full:
            break
        placing.emit(hit, 0)
    return [*placing.out, *placing.unplaced(hits)]


def _latest(records: Sequence[MemoryRecord], marks: Mapping[str, Sequence[str]] | None) -> list[MemoryRecord]:
    """The records that no other of them points at as possibly newer (nothing among them replaces).

    All of them when each is pointed at (marks in a cycle): none is known to be the latest.
    """
    ids = {r.id for r in records}
    latest = [r for r in records if not any(i in ids and i != r.id for i in _marks(r, marks))]
    return latest or list(records)


class _Placing:
    """One :func:`current_first` ordering: each hit after the latest records that may replace it.

    A class rather than a recursive closure: a nested function that calls itself is a
    reference cycle, which kept each recall's hits and records alive until Python's
    collector ran (a young collection every third recall).
    """

    def __init__(
        self,
        fetch: Callable[[Sequence[str]], Mapping[str, MemoryRecord]],
        marks: Mapping[str, Sequence[str]] | None,
        by_id: Mapping[str, Hit],
        shown: int | None,
    ) -> None:
        self._fetch = fetch
        self._marks = marks
        self._known: dict[str, MemoryRecord] = {}  # the active records read so far, by id
        # Every id asked for once: an inactive or missing one stays out of ``known``, and asking
        # again (as each record marked by it would) only reads and decodes it again.
        self._asked: set[str] = set()
        self._by_id = by_id
        self._placed: set[str] = set()
        self._shown = shown
        self.out: list[Hit] = []

    @property
    def full(self) -> bool:
        """Whether as many hits are placed as can be shown."""
        return self._shown is not None and len(self.out) >= self._shown

    def unplaced(self, hits: Sequence[Hit]) -> list[Hit]:
        """The hits not placed yet, as they are."""
        return [h for h in hits if h.id not in self._placed]

    def emit(self, hit: Hit, depth: int) -> None:
        """Place ``hit`` (once), after its latest active replacements (each placed so, recursively)."""
        if hit.id in self._placed:
            return
        self._placed.add(hit.id)
        newer = self._newer(hit.record)
        if newer and depth < _MAX_DEPTH:
            for record in sorted(_latest(newer, self._marks), key=lambda r: r.event_time, reverse=True):
                if self.full:  # the rest lands below the cut
                    break
                self.emit(self._by_id.get(record.id) or Hit(record, hit.score, CURRENT_PATHS), depth + 1)
        if newer:
            hit = dataclasses.replace(hit, outdated_by=tuple(r.id for r in newer))
        self.out.append(hit)

    def _newer(self, record: MemoryRecord) -> list[MemoryRecord]:
        """The active records that ``record`` points at as possibly newer."""
        ids = _marks(record, self._marks)
        self._learn(ids)
        known = self._known
        return [known[i] for i in ids if i in known and i != record.id]

    def _learn(self, ids: Sequence[str]) -> None:
        """Read the records of the ids not asked for yet (active ones become known)."""
        asked = self._asked
        if unread := [i for i in ids if i not in asked]:
            asked.update(unread)
            self._known.update((i, r) for i, r in self._fetch(unread).items() if r.is_active)
