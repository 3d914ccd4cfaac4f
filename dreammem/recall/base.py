"""The recall-path contract: a query in, scored candidates out, scoped to one user."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

from dreammem.recall.filters import RecallFilter
from dreammem.recall.memo import RecordSource, SearchMemo, TextSource

__all__ = [
    "Candidate",
    "RecallPath",
    "RecallQuery",
    "RecordSource",
    "SearchMemo",
    "TextSource",
    "neighbour_seeds",
    "preparer",
]


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


def neighbour_seeds(path: RecallPath) -> Callable[[RecallQuery], list[int]] | None:
    """The path's ``neighbour_seeds(query)``, if it has one, else None.

    A path that reads the session neighbours of some rows says which, given the candidates
    of the paths before it, so that recall may read them ahead with its candidates' records.
    """
    seeds = getattr(path, "neighbour_seeds", None)
    return seeds if callable(seeds) else None
