"""Relevance a current value inherits from the records it superseded.

A new value is often worded so that it shares little with the question it answers:
"For project updates I prefer email" matches "How should you reach me about project
updates?" (MiniLM cosine 0.52), its replacement "Actually, call me instead of
emailing" does not (0.26). The older record is superseded, so recall no longer sees
it, and the replacement alone would fall below the relevance floor: the user would
get nothing where they should get the current value.

The same happens when a dream condenses turns into a summary: "user: I found an old
photo album in the attic.; user: No sugar in my tea anymore, please." is far from
"How do I take my tea?" as a whole, though one of its sources answers it.

So a record is as relevant to a query as the best of the records it replaced or was
distilled from: its *inherited cosine* is the largest cosine between the query and the
stored embedding of a record it superseded or lists in its ``provenance`` (directly or
through a chain of at most ``MAX_DEPTH`` links: an old value superseded by a turn that a
dream then condensed into a summary). The relevance floor (:mod:`dreammem.recall.gate`) takes
the larger of the record's own and its inherited cosine. Every lookup is scoped to
the recalling user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from dreammem.types import MemoryRecord

__all__ = ["MAX_DEPTH", "inherited_cosines"]

MAX_DEPTH = 5
"""Longest supersede chain followed back from one record."""

Sources = Callable[[Sequence[MemoryRecord]], Sequence[tuple[str, MemoryRecord]]]
"""``(parent id, record)`` for each record (of the recalling user) that one of these records
superseded or was distilled from (its ``provenance``)."""

Vectors = Callable[[Sequence[str]], Mapping[str, npt.NDArray[np.float32]]]
"""Stored embeddings by record id (of the recalling user, from the query's model)."""


def inherited_cosines(
    records: Sequence[MemoryRecord],
    query: npt.NDArray[np.float32],
    sources: Sources,
    vectors: Vectors,
) -> dict[str, float]:
    """For each record with sources, the best cosine of the query with what it replaced or condensed.

    Args:
        records: The records to score (those without sources are left out of the result).
        query: The query embedding.
        sources: Looks up what the given records superseded or were distilled from.
        vectors: Looks up stored embeddings by record id.
    """
    root: dict[str, str] = {r.id: r.id for r in records}
    frontier = list(records)
    found: dict[str, str] = {}  # source id -> the record it lends its relevance to
    for _ in range(MAX_DEPTH):
        if not frontier:
            break
        step = [(parent, r) for parent, r in sources(frontier) if r.id not in root and parent in root]
        for parent, record in step:
            root[record.id] = found[record.id] = root[parent]
        frontier = list({r.id: r for _, r in step}.values())
    if not found:
        return {}
    q = _unit(np.asarray(query, dtype=np.float32).ravel())
    best: dict[str, float] = {}
    for sid, vector in vectors(list(found)).items():
        if sid not in found or vector.shape != q.shape:
            continue  # an embedding from another model's dimension cannot be compared
        cosine = float(np.dot(q, _unit(vector)))
        best[found[sid]] = max(best.get(found[sid], cosine), cosine)
    return best


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
