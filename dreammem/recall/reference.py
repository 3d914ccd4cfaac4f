"""The reference gate: a memory is relevant when it is clearly closer to the question than unrelated text is.

A cosine means nothing on its own: MiniLM gives an unrelated memory 0.0-0.3, multilingual-e5
gives it 0.78-0.87, and a user's own store (5 memories or 3,000, on one topic or many) is no
fixed yardstick either. This gate measures every cosine against text the package ships
(:mod:`dreammem.recall.reference_texts`), embedded once per model, so the same threshold means
the same thing for every model and every store size:

* **query side**: the hit's cosine must stand ``z`` robust standard deviations above the
  cosines the query gets against generic *statements* (what an unrelated memory would score
  for this query): a per-query floor;
* **memory side**: it must also stand ``z`` above the cosines the memory gets against generic
  *requests* (what an unrelated question would score for this memory): a memory that sits
  near every question ("It rained all afternoon here") does not answer each of them.

Both use the median and the scaled median absolute deviation of the reference cosines, so one
reference sentence on the question's topic does not move the yardstick. The reference set is
chosen by script (Chinese text: the Chinese set). The thresholds are calibrated per model
(:data:`REFERENCE_FLOORS`, ``dreammem bench reference-gate``, docs/BENCHMARKS.md "Session 23");
a model without them keeps the older gate (:mod:`dreammem.recall.gate`).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.embed.models import E5Embedder
from dreammem.recall.gate import RelativeFloor
from dreammem.recall.reference_texts import REQUESTS, STATEMENTS
from dreammem.text.tokenize import contains_cjk

__all__ = [
    "MINILM_FLOORS",
    "REFERENCE_FLOORS",
    "ReferenceFloors",
    "ReferenceGate",
    "ReferenceSet",
    "reference_floors_for",
    "reference_gate",
    "reference_set",
    "standing",
]

Vectors = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class ReferenceFloors:
    """Thresholds of the reference gate, in robust standard deviations.

    Attributes:
        query: How far above the query's cosines to generic statements a hit must be.
        memory: How far above the memory's cosines to generic requests the query must be.
    """

    query: float
    memory: float


REFERENCE_FLOORS: Mapping[str, ReferenceFloors] = {
    E5Embedder.name: ReferenceFloors(query=3.0, memory=1.5),
}
"""Per embedding model, chosen by five folds over ``bench updates`` (docs/BENCHMARKS.md, "Session 23")."""

MINILM_FLOORS = ReferenceFloors(query=3.5, memory=3.0)
"""MiniLM's thresholds, chosen the same way but not the default (``reference_floor=[3.5, 3.0]`` opts in):
on LoCoMo dev they cost hit@5 0.789 -> 0.754, because hits that only the keyword, time or graph
paths found in a large store are then judged by their own cosine, where the older MiniLM floor lets
them through whenever the query passes."""

_MAD_SCALE = 1.4826
"""Turns a median absolute deviation into a standard deviation for normal data."""


def standing(scores: npt.NDArray[np.float32]) -> tuple[float, float]:
    """``(median, robust sd)`` of reference cosines (sd at least 1e-3)."""
    centre = float(np.median(scores))
    spread = _MAD_SCALE * float(np.median(np.abs(scores - centre)))
    return centre, max(spread, 1e-3)


def _lang(text: str) -> str:
    return "zh" if contains_cjk(text) else "en"


class ReferenceSet:
    """The reference sentences of every language, embedded by one model (built once per model name)."""

    def __init__(self, embedder: Embedder) -> None:
        self.model = embedder.name
        self._statements = {lang: embedder.embed_documents(list(t)) for lang, t in STATEMENTS.items()}
        self._requests = {
            lang: np.stack([embedder.embed_query(t) for t in texts]).astype(np.float32)
            for lang, texts in REQUESTS.items()
        }

    def query_floor(self, text: str, vector: Vectors, z: float) -> RelativeFloor:
        """The query-side floor: the query's cosines to generic statements of ``text``'s language.

        ``text`` is what the query is compared with (the memories), so a cross-lingual question is
        measured against unrelated memories in their language.
        """
        centre, spread = standing(self._statements[_lang(text)] @ vector)
        return RelativeFloor(centre, spread, z)

    def memory_floor(self, text: str, vector: Vectors, z: float) -> float:
        """The cosine a question in `text`'s language needs: `z` above generic requests, for this memory."""
        centre, spread = standing(self._requests[_lang(text)] @ vector)
        return centre + z * spread

    def misses(
        self, cosines: Mapping[str, float], vectors: Mapping[str, Vectors], query: str, z: float
    ) -> set[str]:
        """The ids whose cosine misses their memory-side floor (requests in the query's language)."""
        return {
            rid
            for rid, cosine in cosines.items()
            if rid in vectors and cosine < self.memory_floor(query, vectors[rid], z)
        }


_SETS: dict[str, ReferenceSet] = {}
_LOCK = threading.Lock()


def reference_set(embedder: Embedder) -> ReferenceSet:
    """The embedded reference set of this embedder's model (embedded on first use, then shared)."""
    with _LOCK:
        found = _SETS.get(embedder.name)
        if found is None:
            found = _SETS[embedder.name] = ReferenceSet(embedder)
        return found


def reference_floors_for(model_name: str | None, config: RecallConfig) -> ReferenceFloors | None:
    """The reference gate's thresholds for this model: the config's, else the calibrated ones, else None.

    None too when the config sets the absolute floor itself (a number, or None: no gate at all).
    """
    chosen = config.reference_floor
    if chosen is None or config.relevance_floor != "auto":
        return None
    if chosen != "auto":
        return ReferenceFloors(*chosen)
    return REFERENCE_FLOORS.get(model_name or "")


@dataclass(frozen=True, slots=True)
class ReferenceGate:
    """The reference gate of one query: its per-query floor and the memory-side test.

    Attributes:
        relative: The query side (the hit's cosine against the query's reference cosines).
        floors: The thresholds.
        refs: The embedded reference set.
    """

    relative: RelativeFloor
    floors: ReferenceFloors
    refs: ReferenceSet
    query: str

    @property
    def floor(self) -> float:
        """The cosine this query's hits need (the query side as an absolute floor)."""
        return self.relative.mean + self.relative.z * self.relative.sd

    def misses(self, cosines: Mapping[str, float], vectors: Mapping[str, Vectors]) -> set[str]:
        """The ids whose cosine does not clear their memory side."""
        return self.refs.misses(cosines, vectors, self.query, self.floors.memory)


def reference_gate(
    embedder: Embedder | None,
    config: RecallConfig,
    text: str,
    vector: Vectors | None,
    found: Sequence[str] = (),
) -> ReferenceGate | None:
    """The reference gate for this query, or None (no embedding, no calibrated thresholds).

    ``found`` are the texts of the candidate memories: the query side uses the statements of their
    language (most of them), else of the query's.
    """
    if embedder is None or vector is None:
        return None
    floors = reference_floors_for(embedder.name, config)
    if floors is None:
        return None
    refs = reference_set(embedder)
    langs = [_lang(t) for t in found]
    majority = max(sorted(set(langs)), key=langs.count) if langs else _lang(text)
    side = text if majority == _lang(text) else found[langs.index(majority)]
    return ReferenceGate(refs.query_floor(side, vector, floors.query), floors, refs, text)
