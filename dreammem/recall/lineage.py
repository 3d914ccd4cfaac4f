"""Relevance a current value inherits from the records it superseded.

A new value is often worded so that it shares little with the question it answers:
"For project updates I prefer email" matches "How should you reach me about project
updates?" (MiniLM cosine 0.52), its replacement "Actually, call me instead of
emailing" does not (0.26). The older record is superseded, so recall no longer sees
it, and the replacement alone would fall below the relevance floor: the user would
get nothing where they should get the current value.

So a record is as relevant to a query as the best of the records it replaced, down
the supersede chain: its *inherited cosine* is the largest cosine between the query
and the stored embedding of a record it superseded (directly or through a chain of
at most ``MAX_DEPTH`` links). The relevance floor (:mod:`dreammem.recall.gate`) takes
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

Predecessors = Callable[[Sequence[str]], Sequence[MemoryRecord]]
"""The records (of the recalling user) that any of these ids directly superseded."""

Vectors = Callable[[Sequence[str]], Mapping[str, npt.NDArray[np.float32]]]
"""Stored embeddings by record id (of the recalling user, from the query's model)."""


def inherited_cosines(
    ids: Sequence[str],
    query: npt.NDArray[np.float32],
    predecessors: Predecessors,
    vectors: Vectors,
) -> dict[str, float]:
    """For each id that superseded something, the best cosine of the query with what it replaced.

    Args:
        ids: The records to score (ids without predecessors are left out of the result).
        query: The query embedding.
        predecessors: Looks up the records that the given ids directly superseded.
        vectors: Looks up stored embeddings by record id.
    """
    root: dict[str, str] = {i: i for i in ids}
    frontier = list(root)
    found: dict[str, str] = {}  # predecessor id -> the id it was reached from
    for _ in range(MAX_DEPTH):
        if not frontier:
            break
        step = [r for r in predecessors(frontier) if r.id not in root and r.superseded_by in root]
        for record in step:
            assert record.superseded_by is not None
            root[record.id] = root[record.superseded_by]
            found[record.id] = root[record.id]
        frontier = [r.id for r in step]
    if not found:
        return {}
    q = _unit(np.asarray(query, dtype=np.float32).ravel())
    best: dict[str, float] = {}
    for pid, vector in vectors(list(found)).items():
        if pid not in found or vector.shape != q.shape:
            continue  # an embedding from another model's dimension cannot be compared
        cosine = float(np.dot(q, _unit(vector)))
        best[found[pid]] = max(best.get(found[pid], cosine), cosine)
    return best


def _unit(vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
