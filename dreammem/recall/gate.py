"""The relevance floor: a query with no relevant memory recalls nothing.

Fusion scores are ranks: the best of ten unrelated memories still scores 1.0. The
floor is on the one absolute signal recall has, the cosine similarity between the
query and a memory (the vector path's score):

* a hit the vector path returned passes when its cosine is at least the floor;
* a hit the vector path did not return (a large store: it was found by keyword,
  time or graph only, and lies below the vector path's last candidate) passes when
  the query as a whole does, i.e. when some candidate's cosine reaches the floor;
* a hit that superseded a record which clears the floor passes: a current value is as
  relevant as the value it replaced ("call me instead of emailing" answers "how should
  you reach me about project updates?" because "for project updates I prefer email"
  does), and so does a summary whose sources do (:mod:`dreammem.recall.lineage`);
* a hit the temporal path returned passes: the query asked about a time and the
  memory is from it ("what did we do yesterday?" shares no words with "we spent the
  afternoon at the beach");
* candidates a path returned as *sole* (a topic-free "what did we talk about last
  time?") are relevant by time, and pinned memories are never held back by it
  (they come from their own budget: :mod:`dreammem.recall.budget`).

Cosines are not comparable across models, so the floor is calibrated per embedding
model (``dreammem bench gate``, docs/BENCHMARKS.md) and looked up by the embedder's
name; ``RecallConfig.relevance_floor`` overrides it (a number) or switches it off
(``None``). A model without a calibrated floor (the test-only hashing embedder, a
model of your own) recalls without one unless the config gives a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dreammem.config import RecallConfig
from dreammem.embed.models import MINILM, E5Embedder

__all__ = ["CALIBRATED_FLOORS", "floor_for", "passes_relevance", "query_passes"]

CALIBRATED_FLOORS: Mapping[str, float] = {
    MINILM: 0.30,
    E5Embedder.name: 0.83,
}
"""Cosine floors per embedding model (docs/BENCHMARKS.md, "Relevance floor"): each is at or
below what leave-one-out calibration chose (MiniLM 0.35, e5 0.862), lowered so that a task
request still recalls the preferences that apply to it (MiniLM: "book my flight" vs "I prefer
window seats on flights", cosine 0.345) and a cross-lingual question its memory (e5: 0.836)."""


def floor_for(model_name: str | None, config: RecallConfig) -> float | None:
    """The cosine floor for this model: the config's number, else the calibrated one, else None."""
    if config.relevance_floor != "auto":
        return config.relevance_floor
    return CALIBRATED_FLOORS.get(model_name or "")


def passes_relevance(
    path_scores: Mapping[str, float],
    *,
    floor: float | None,
    query_passes: bool,
    inherited: float | None = None,
) -> bool:
    """Whether one hit clears the floor (see the module docstring).

    ``inherited`` is the hit's cosine inherited from the records it superseded
    (:mod:`dreammem.recall.lineage`); the larger of it and the hit's own cosine counts.
    """
    if floor is None or "temporal" in path_scores:
        return True
    if inherited is not None and inherited >= floor:
        return True
    cosine = path_scores.get("vector")
    return query_passes if cosine is None else cosine >= floor


def query_passes(vector_scores: Sequence[float], floor: float | None) -> bool:
    """Whether any candidate of the vector path reaches the floor (always, without a floor)."""
    return floor is None or any(s >= floor for s in vector_scores)
