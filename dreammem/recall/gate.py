"""The relevance floor: a query with no relevant memory recalls nothing.

Fusion scores are ranks: the best of ten unrelated memories still scores 1.0. The
floor is on the one absolute signal recall has, the cosine similarity between the
query and a memory (:attr:`~dreammem.recall.base.Candidate.similarity`, which the vector
path carries):

* a hit the vector path returned passes when its cosine is at least the floor;
* a hit the vector path did not return (a large store: it was found by keyword,
  time or graph only, and lies below the vector path's last candidate) passes when
  the query as a whole does, i.e. when some candidate's cosine reaches the floor;
* a hit the keyword path returned (its best ``RecallConfig.lexical_evidence``, by default
  all 30) passes on the query's own words when the query as a whole does, whatever its own
  cosine: a long memory can match the question's words and sit below the floor, and a hit
  both paths found is not held to more than one only the keyword path found;
* a hit that superseded a record which clears the floor passes: a current value is as
  relevant as the value it replaced ("call me instead of emailing" answers "how should
  you reach me about project updates?" because "for project updates I prefer email"
  does), and so does a summary whose sources do (:mod:`dreammem.recall.lineage`);
* a hit found *by time* passes (:attr:`~dreammem.recall.base.Candidate.timed`): the
  query names a time window and the memory is from it ("what did we do yesterday?"
  shares no words with "we spent the afternoon at the beach"). A hit the temporal path
  found by content and only ordered by time ("who was the concert I went to last
  time?", "when is our anniversary?") is judged like any other hit: the time word in
  the question does not make an unrelated memory relevant;
* a hit found only by a path that follows its place beside other hits (the reply path,
  judged by ``"own_vector"`` in :mod:`dreammem.recall.recipe`) is judged by its own
  stored vector's cosine, like a hit the vector path returned: being next to a relevant
  memory does not make it relevant;
* candidates a path returned as *sole* (a topic-free "what did we talk about last
  time?") are relevant by time, and pinned memories are never held back by it
  (they come from their own budget: :mod:`dreammem.recall.budget`).

Some models compress every cosine into a narrow band (multilingual-e5: an unrelated
Chinese memory scores 0.83-0.87, a relevant one 0.86-0.93), where no absolute floor
separates them. For such a model a second signal applies, the **relative floor**: a
hit must also stand out from the user's own memories, its cosine at least ``z``
standard deviations above the mean cosine of the query to the user's most recent
memories (the *background*, ``RecallConfig.background_size`` of them, read once per
recall). It asks "is this memory closer to the question than this user's memories
usually are?", which no single number across queries and stores can. It applies to
every hit the absolute floor judges (a hit found by keyword only is judged by its
stored vector's cosine) and to the cosine a hit inherits; with fewer than
``MIN_BACKGROUND`` memories the background says too little and only the absolute floor
applies.

The relative floor has a second side, the **mutual floor**: the question must also stand
out *for the memory*, its cosine at least ``RecallConfig.mutual_floor`` standard deviations
above the mean cosine of that memory to the same background memories (itself and its
copies left out). Some memories sit near everything ("I went to a new bakery downtown",
"I work fully remote now"), so every question stands out a little from the background
when seen from the question's side, but not from theirs. It asks the question's
side and the memory's side alike, as mutual nearest neighbours do, and is calibrated with
the relative floor (``dreammem bench relative-gate``). It judges a hit's own cosine; a
cosine a current value inherits is judged by the relative floor alone.

For MiniLM and multilingual-e5 the **reference gate** (:mod:`dreammem.recall.reference`) takes
the place of these floors: the same tests, with cosines judged against generic text the package
ships instead of a fixed number or the user's own memories (``RecallConfig.reference_floor``).

Cosines are not comparable across models, so the floor is calibrated per embedding
model (``dreammem bench gate``, docs/BENCHMARKS.md) and looked up by the embedder's
name; ``RecallConfig.relevance_floor`` overrides it (a number) or switches it off
(``None``). A model without a calibrated floor (the test-only hashing embedder, a
model of your own) recalls without one unless the config gives a number.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dreammem.config import RecallConfig
from dreammem.embed.models import MINILM, E5Embedder
from dreammem.text.tokenize import contains_cjk

__all__ = [
    "CALIBRATED_FLOORS",
    "ENGLISH_ONLY_MODELS",
    "MIN_BACKGROUND",
    "MUTUAL_FLOORS",
    "RELATIVE_FLOORS",
    "RelativeFloor",
    "floor_for",
    "judges_language",
    "memory_standing",
    "mutual_floor_for",
    "mutual_misses",
    "passes_relevance",
    "query_passes",
    "relative_floor",
    "relative_floor_for",
]

CALIBRATED_FLOORS: Mapping[str, float] = {
    MINILM: 0.30,
    E5Embedder.name: 0.83,
}
"""Cosine floors per embedding model (docs/BENCHMARKS.md, "Relevance floor"): each is at or
below what leave-one-out calibration chose (MiniLM 0.35, e5 0.862), lowered so that a task
request still recalls the preferences that apply to it (MiniLM: "book my flight" vs "I prefer
window seats on flights", cosine 0.345) and a cross-lingual question its memory (e5: 0.836)."""


ENGLISH_ONLY_MODELS: frozenset[str] = frozenset({MINILM})
"""Models trained on English text alone. Their cosine to a Chinese or Japanese question says
nothing of relevance (MiniLM puts unrelated Chinese memories above its floor: docs/BENCHMARKS.md,
"Session 26"), so under the calibrated floor such a question's hits pass on its words (the keyword
path's best hits) or its time, never on a cosine (:func:`judges_language`)."""


RELATIVE_FLOORS: Mapping[str, float] = {
    E5Embedder.name: 2.0,
}
"""Relative floors (standard deviations above the background mean) per embedding model, chosen by
leave-one-conversation-out on the dev part of ``dreammem bench updates`` (``dreammem bench
relative-gate``; docs/BENCHMARKS.md, "Relative floor"). MiniLM has none: its absolute floor
already keeps unrelated questions out."""

MUTUAL_FLOORS: Mapping[str, float] = {
    E5Embedder.name: -1.25,
}
"""Mutual floors (standard deviations above a memory's mean cosine to the background) per model,
chosen by leave-one-conversation-out given the relative floor (docs/BENCHMARKS.md, "Relative
floor"). Negative: e5 puts a question further from a memory than memories lie from each other."""

MIN_BACKGROUND = 10
"""Fewest background memories for which the relative floor applies."""


@dataclass(frozen=True, slots=True)
class RelativeFloor:
    """The query's cosines to the user's background memories, and the floor above their mean.

    Attributes:
        mean: Mean cosine of the query to the background memories.
        sd: Their standard deviation (positive).
        z: How many standard deviations above the mean a hit's cosine must be.
    """

    mean: float
    sd: float
    z: float

    def passes(self, cosine: float) -> bool:
        """Whether a cosine stands out enough from the background."""
        return (cosine - self.mean) / self.sd >= self.z


_SELF = 0.999
"""A background memory this close to a hit is the hit itself or a copy of it (left out)."""


def memory_standing(
    vector: npt.NDArray[np.float32], background: npt.NDArray[np.float32]
) -> tuple[float, float] | None:
    """``(mean, sd)`` of a memory's cosines to the background, itself left out (None: too few, all equal)."""
    scores = np.asarray(background, dtype=np.float32) @ np.asarray(vector, dtype=np.float32)
    scores = scores[scores < _SELF]
    if len(scores) < MIN_BACKGROUND:
        return None
    sd = float(scores.std())
    if not np.isfinite(sd) or sd <= 1e-6:
        return None
    return float(scores.mean()), sd


def mutual_misses(
    cosines: Mapping[str, float],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    background: npt.NDArray[np.float32],
    z: float,
) -> set[str]:
    """The ids whose cosine to the query does not stand out ``z`` sd above their cosines to the background.

    A memory whose background says too little (too few, all equal) is not judged by it.
    """
    misses = set()
    for rid, cosine in cosines.items():
        if rid in vectors and (standing := memory_standing(vectors[rid], background)) is not None:
            mean, sd = standing
            if (cosine - mean) / sd < z:
                misses.add(rid)
    return misses


def mutual_floor_for(model_name: str | None, config: RecallConfig) -> float | None:
    """The mutual floor for this model: the config's number, else the calibrated one, else None."""
    if config.mutual_floor != "auto":
        return config.mutual_floor
    return MUTUAL_FLOORS.get(model_name or "")


def relative_floor_for(model_name: str | None, config: RecallConfig) -> float | None:
    """The relative floor for this model: the config's number, else the calibrated one, else None."""
    if config.relative_floor != "auto":
        return config.relative_floor
    return RELATIVE_FLOORS.get(model_name or "")


def relative_floor(
    query: npt.NDArray[np.float32], background: npt.NDArray[np.float32], z: float
) -> RelativeFloor | None:
    """The relative floor of one query over background vectors (None: too few, or all equal)."""
    if len(background) < MIN_BACKGROUND:
        return None
    scores = np.asarray(background, dtype=np.float32) @ np.asarray(query, dtype=np.float32)
    sd = float(scores.std())
    if not np.isfinite(sd) or sd <= 1e-6:
        return None
    return RelativeFloor(float(scores.mean()), sd, z)


def floor_for(model_name: str | None, config: RecallConfig) -> float | None:
    """The cosine floor for this model: the config's number, else the calibrated one, else None."""
    if config.relevance_floor != "auto":
        return config.relevance_floor
    return CALIBRATED_FLOORS.get(model_name or "")


def judges_language(model_name: str | None, config: RecallConfig, query: str) -> bool:
    """Whether the model's cosines judge this query: not an English-only model's of a CJK question.

    A floor the config sets (a number) is the caller's choice and always judges.
    """
    english_only = model_name in ENGLISH_ONLY_MODELS
    return config.relevance_floor != "auto" or not english_only or not contains_cjk(query)


def passes_relevance(
    similarity: float | None,
    *,
    floor: float | None,
    query_passes: bool,
    inherited: float | None = None,
    cosine: float | None = None,
    relative: RelativeFloor | None = None,
    timed: bool = False,
    mutual: bool = True,
) -> bool:
    """Whether one hit clears the floor (see the module docstring).

    ``similarity`` is the hit's cosine to the query as the paths that found it carried it
    (None: none did). ``inherited`` is the hit's cosine inherited from the records it superseded
    (:mod:`dreammem.recall.lineage`); the larger of it and the hit's own cosine counts.
    ``cosine`` is the hit's own cosine when no path carried it (read
    from its stored vector); ``relative``, when given, must pass too. ``mutual`` is False
    when the hit's own cosine fails the mutual floor: then only an inherited cosine can
    pass it. A ``timed`` hit (found by its time) always passes.
    """
    if floor is None or timed:
        return True
    own = similarity if similarity is not None else cosine
    if relative is not None:
        usable = own if mutual else None
        best = max((c for c in (usable, inherited) if c is not None), default=None)
        if best is None or not relative.passes(best):
            return False
        if not mutual:
            return inherited is not None and inherited >= floor
    if inherited is not None and inherited >= floor:
        return True
    return query_passes if own is None else own >= floor


def query_passes(similarities: Sequence[float], floor: float | None) -> bool:
    """Whether any candidate's cosine to the query reaches the floor (always, without a floor)."""
    return floor is None or any(s >= floor for s in similarities)
