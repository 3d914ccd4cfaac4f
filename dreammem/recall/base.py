"""The recall-path contract: a query in, scored candidates out, scoped to one user."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from dreammem.recall.filters import RecallFilter
from dreammem.types import MemoryRecord

__all__ = [
    "Candidate",
    "RecallPath",
    "RecallQuery",
    "RecordSource",
    "SearchMemo",
    "TextSource",
    "preparer",
]

T = TypeVar("T")


class SearchMemo:
    """One recall's searches by key, and the texts it read, so paths asking the same share them.

    A search ``depth`` deep answers every request for the same key that is as deep or
    shallower (its first ``depth``), and any request when it found fewer than it asked
    for (it holds them all); only a deeper request searches again. Texts are read once
    per row, and whole records once per row (nothing is written during a recall).
    """

    def __init__(self) -> None:
        self._held: dict[Hashable, tuple[int, list[Candidate]]] = {}
        self._texts: dict[int, str | None] = {}
        self._records: dict[int, MemoryRecord | None] = {}
        self._once: dict[Hashable, object] = {}

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is asked in this recall, the held value after."""
        if key not in self._once:
            self._once[key] = compute()
        return self._once[key]  # type: ignore[return-value]

    def active_texts(self, store: TextSource, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """``store.active_texts(user_id, rowids)``, reading only the rows not read before."""
        missing = [r for r in dict.fromkeys(rowids) if r not in self._texts]
        if missing:
            found = store.active_texts(user_id, missing)
            self._texts.update((r, found.get(r)) for r in missing)
        return {r: text for r in rowids if (text := self._texts[r]) is not None}

    def records(self, store: RecordSource, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """``store.get_by_rowids(user_id, rowids)``, reading and decoding only the rows not read before.

        The temporal path orders its best matches by their records' times, and the pipeline
        loads the fused candidates' records: one recall decodes each record once.
        """
        missing = [r for r in dict.fromkeys(rowids) if r not in self._records]
        if missing:
            found = store.get_by_rowids(user_id, missing)
            self._records.update((r, found.get(r)) for r in missing)
        return {r: record for r in rowids if (record := self._records[r]) is not None}

    def nearest(self, key: Hashable, depth: int, search: Callable[[int], list[Candidate]]) -> list[Candidate]:
        """The first ``depth`` candidates for ``key``: held, or ``search(depth)`` (then held)."""
        held = self._held.get(key)
        if held is None or (held[0] < depth and len(held[1]) == held[0]):
            held = (depth, search(depth))
            self._held[key] = held
        return held[1][:depth]


class RecordSource(Protocol):
    """Where a recall reads whole records by row id (the record store)."""

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id (others left out)."""
        ...


class TextSource(Protocol):
    """Where a recall reads the texts of rows (the record store)."""

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The text of each active record of this user among these row ids (others left out)."""
        ...


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """Everything a path may need about one recall.

    Attributes:
        text: The query text.
        user_id: The scope; every path must stay inside it.
        limit: How many candidates a path should return at most.
        now: The reference time for relative dates ("yesterday").
        session_id: The current session, when known.
        embedding: The query embedding, computed once and shared by paths.
        earlier: Candidates of the paths that already ran for this recall, by path
            name (a path may reuse them instead of searching again).
        filter: Conditions every returned memory must meet (applied to the fused
            candidates before the top ``k``, and to pinned memories).
        allowed: With a filter, the row ids of the user's active memories that may
            meet it (a superset; None when there are too many to list): the vector
            path searches only these.
        searches: This recall's searches, shared by the paths that ask the same one
            (the pipeline gives each run a fresh one).
    """

    text: str
    user_id: str
    limit: int
    now: datetime
    session_id: str | None = None
    embedding: npt.NDArray[np.float32] | None = field(default=None, compare=False)
    earlier: Mapping[str, Sequence[Candidate]] = field(default_factory=dict, compare=False)
    filter: RecallFilter | None = None
    allowed: frozenset[int] | None = field(default=None, compare=False)
    searches: SearchMemo = field(default_factory=SearchMemo, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory a path found: its row id in the record store and the path's score.

    ``sole`` marks an answer that no content match can improve (the temporal path's
    "what did we talk about last time?" with no topic: the newest conversation). When
    a path returns sole candidates, recall fuses only such paths and the relevance
    floor does not apply to them.

    ``timed`` marks a memory found *by its time*: it lies in the time window the query
    names ("what did we do yesterday?"), so it is relevant by time and the relevance
    floor does not judge its content. A memory a path found by content, even when it
    then ordered the matches by time ("last time", "when did ..."), is not timed.

    ``similarity`` is the memory's cosine to the query, carried by the paths that
    measure it (the vector path); the relevance gate reads it, whatever path found it.
    """

    rowid: int
    score: float
    sole: bool = False
    timed: bool = False
    similarity: float | None = None


class RecallPath(Protocol):
    """One way of finding memories. ``name`` labels its hits in the trace."""

    name: str

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Candidates for the query, best first, only of ``query.user_id``."""
        ...


def preparer(path: RecallPath) -> Callable[[RecallQuery], None] | None:
    """The path's ``prepare(query)``, if it has one, else None.

    A path may read beforehand what its search needs of the query's text alone (held in
    ``query.searches``); the pipeline calls it while the query is embedded.
    """
    prepare = getattr(path, "prepare", None)
    return prepare if callable(prepare) else None
