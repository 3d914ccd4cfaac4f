"""Choosing the relative and mutual floors (:mod:`dreammem.recall.gate`) by leave-one-conversation-out.

The update suite's conversations of one language (``dreammem bench updates``) are
written to a store; every question of the **dev** split (update, keep and no-memory
questions) is recalled with no relative floor, keeping each hit's paths, its cosine
(from its stored vector when the vector path did not return it) and the query's cosines
to the user's recent memories (the background). For a floor ``z`` the hits are then
filtered as recall filters them (hits found by time pass, the absolute floor still applies),
giving precision and coverage of the injected top 5 and the share of no-memory
questions injecting anything. The mutual floor is chosen with it: each hit also keeps
how far its cosine stands out from the memory's own cosines to the background
(``mutual``), and a pair ``(z, m)`` of the two grids filters both sides.
Leave-one-conversation-out: on the other dev conversations the ``z`` maximising
precision + coverage - injection is chosen, then the mutual floor given it (the least
strict among ties), and scored on the conversation left out. The held-back split is not
used to choose; it is scored once at the shipped values.
"""

from __future__ import annotations

import statistics
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.recall.gate import CALIBRATED_FLOORS, memory_standing, relative_floor
from dreammem_bench.updates import Conversation
from dreammem_bench.updates_run import write_conversation

__all__ = [
    "GRID",
    "MUTUAL_GRID",
    "Asked",
    "Fold",
    "Judged",
    "Seen",
    "choose",
    "collect",
    "injected_scores",
    "scores",
    "spread",
]

GRID = tuple(round(0.25 * n, 2) for n in range(17))
"""Relative floors tried: 0 to 4 standard deviations."""

MUTUAL_GRID = (None, *(round(0.25 * n, 2) for n in range(-16, 9)))
"""Mutual floors tried: off, then -4 to 2 standard deviations."""

_K = 5


@dataclass(frozen=True, slots=True)
class Seen:
    """One recalled hit: its cosine, z against the background (both sides), and whether it is relevant."""

    cosine: float | None
    z: float | None
    mutual: float | None  # the cosine against the memory's own cosines to the background, in sd
    timed: bool  # found by its time: the floor does not judge it
    relevant: bool
    states: tuple[bool, bool]  # (first statement, second statement) of the case


@dataclass(frozen=True, slots=True)
class Asked:
    """One question: its conversation, kind (update, keep, none), split and hits."""

    user: str
    kind: str
    split: str
    hits: tuple[Seen, ...]


def collect(convs: Sequence[Conversation], embedder: Embedder) -> list[Asked]:
    """Write the conversations and recall every question with no relative floor."""
    conf = DreamMemConfig(recall=RecallConfig(relative_floor=None, mutual_floor=None, pinned_max_count=0))
    out: list[Asked] = []
    with tempfile.TemporaryDirectory() as tmp, DreamMemory(Path(tmp), embedder=embedder, config=conf) as mem:
        for conv in convs:
            write_conversation(mem, conv)
        for conv in convs:
            out += _questions(mem, conv, embedder, conf.recall.background_size)
    return out


def _questions(memory: DreamMemory, conv: Conversation, embedder: Embedder, size: int) -> list[Asked]:
    background = memory.store.recent_vectors(conv.user_id, embedder.name, size)
    asked: list[tuple[str, str, str, str, str]] = [
        (c.question, c.kind, c.split, c.first, c.second) for c in conv.cases
    ]
    asked += [(q, "none", split, "", "") for q, split in conv.unrelated]
    out = []
    for question, kind, split, first, second in asked:
        query = embedder.embed_query(question)
        floor = relative_floor(query, background, 0.0)
        result = memory.recall(question, user_id=conv.user_id, k=10, now=conv.asked_at)
        stored = memory.store.vectors_of(conv.user_id, embedder.name, [h.id for h in result])
        hits = []
        for hit in result:
            cosine = hit.path_scores.get("vector")
            if cosine is None and hit.id in stored:
                cosine = float(stored[hit.id] @ query)
            z = None if floor is None or cosine is None else (cosine - floor.mean) / floor.sd
            standing = memory_standing(stored[hit.id], background) if hit.id in stored else None
            mutual = None if standing is None or cosine is None else (cosine - standing[0]) / standing[1]
            text = hit.record.content
            said = (bool(first) and first in text, bool(second) and second in text)
            hits.append(Seen(cosine, z, mutual, hit.timed, any(said), said))
        out.append(Asked(conv.user_id, kind, split, tuple(hits)))
    return out


def _passes(hit: Seen, z: float, mutual: float | None, floor: float) -> bool:
    if hit.timed:
        return True
    if hit.cosine is None or hit.cosine < floor or (hit.z is not None and hit.z < z):
        return False
    return mutual is None or hit.mutual is None or hit.mutual >= mutual


def _kept(asked: Asked, z: float, mutual: float | None, floor: float) -> list[Seen]:
    return [h for h in asked.hits if _passes(h, z, mutual, floor)][:_K]


def scores(
    questions: Sequence[Asked], z: float, floor: float, mutual: float | None = None
) -> dict[str, float]:
    """Precision, coverage and unrelated injection of the injected top 5 at these floors."""
    return injected_scores((asked.kind, _kept(asked, z, mutual, floor)) for asked in questions)


class Judged(Protocol):
    """A recalled hit as the gate benches label it."""

    @property
    def relevant(self) -> bool:
        """Whether the hit is a memory the question is about."""

    @property
    def states(self) -> tuple[bool, ...]:
        """Per statement of the case (first, second): whether the hit holds it."""


def injected_scores(injected: Iterable[tuple[str, Sequence[Judged]]]) -> dict[str, float]:
    """Precision, coverage and unrelated injection over (question kind, hits injected) pairs."""
    values: dict[str, list[float]] = defaultdict(list)
    for kind, kept in injected:
        if kind == "none":
            values["injection"].append(float(bool(kept)))
            continue
        if kept:
            values["precision"].append(sum(h.relevant for h in kept) / len(kept))
        if kind == "update":
            values["coverage"].append(float(any(h.states[1] for h in kept)))
        else:
            values["coverage"].append(sum(any(h.states[i] for h in kept) for i in (0, 1)) / 2)
    return {name: float(np.mean(v)) for name, v in values.items() if v}


def _objective(found: dict[str, float]) -> float:
    return found.get("precision", 0.0) + found.get("coverage", 0.0) - found.get("injection", 0.0)


@dataclass(frozen=True, slots=True)
class Fold:
    """One fold: the conversation left out, the floors chosen without it, and its scores at them."""

    held_out: str
    z: float
    mutual: float | None
    found: dict[str, float]


def _lenient(mutual: float | None) -> float:
    return -(mutual if mutual is not None else -100.0)


def choose(questions: Sequence[Asked], model: str, *, mutual: bool = True) -> list[Fold]:
    """Leave-one-conversation-out over the dev questions: the relative floor, then the mutual one.

    In each fold ``z`` is chosen alone (the least strict among ties), then the mutual floor
    given that ``z``. Lowering ``z`` in exchange for the mutual floor looks better here than it
    is: this command recalls without lineage, and a current value inheriting the cosine of what
    it replaced is judged by the relative floor alone (``dreammem bench updates`` showed it).
    """
    floor = CALIBRATED_FLOORS.get(model, -1.0)
    dev = [q for q in questions if q.split == "dev"]
    folds = []
    for user in sorted({q.user for q in dev}):
        train = [q for q in dev if q.user != user]
        z = max(GRID, key=lambda z: (_objective(scores(train, z, floor)), -z))
        m = None
        if mutual:
            m = max(MUTUAL_GRID, key=lambda m: (_objective(scores(train, z, floor, m)), _lenient(m)))
        folds.append(Fold(user, z, m, scores([q for q in dev if q.user == user], z, floor, m)))
    return folds


def spread(values: Sequence[float]) -> str:
    """``mean (min-max)``."""
    return f"{statistics.fmean(values):.3f} ({min(values):.3f}-{max(values):.3f})"
