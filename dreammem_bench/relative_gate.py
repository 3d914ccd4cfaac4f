"""Choosing the relative floor (:mod:`dreammem.recall.gate`) by leave-one-conversation-out.

The update suite's conversations of one language (``dreammem bench updates``) are
written to a store; every question of the **dev** split (update, keep and no-memory
questions) is recalled with no relative floor, keeping each hit's paths, its cosine
(from its stored vector when the vector path did not return it) and the query's cosines
to the user's recent memories (the background). For a floor ``z`` the hits are then
filtered as recall filters them (hits found by time pass, the absolute floor still applies),
giving precision and coverage of the injected top 5 and the share of no-memory
questions injecting anything. Leave-one-conversation-out: on the other dev
conversations the ``z`` of the grid maximising precision + coverage - injection is
chosen and scored on the conversation left out. The held-back split is not used to
choose; it is scored once at the shipped value.
"""

from __future__ import annotations

import statistics
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.recall.gate import CALIBRATED_FLOORS, relative_floor
from dreammem_bench.updates import Conversation
from dreammem_bench.updates_run import write_conversation

__all__ = ["GRID", "Asked", "Seen", "choose", "collect", "scores"]

GRID = tuple(round(0.25 * n, 2) for n in range(17))
"""Relative floors tried: 0 to 4 standard deviations."""

_K = 5


@dataclass(frozen=True, slots=True)
class Seen:
    """One recalled hit: its cosine, z against the background, paths, and whether it is relevant."""

    cosine: float | None
    z: float | None
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
    conf = DreamMemConfig(recall=RecallConfig(relative_floor=None, pinned_max_count=0))
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
            text = hit.record.content
            said = (bool(first) and first in text, bool(second) and second in text)
            hits.append(Seen(cosine, z, hit.timed, any(said), said))
        out.append(Asked(conv.user_id, kind, split, tuple(hits)))
    return out


def _kept(asked: Asked, z: float, floor: float) -> list[Seen]:
    kept = [
        h
        for h in asked.hits
        if h.timed or (h.cosine is not None and h.cosine >= floor and (h.z is None or h.z >= z))
    ]
    return kept[:_K]


def scores(questions: Sequence[Asked], z: float, floor: float) -> dict[str, float]:
    """Precision, coverage and unrelated injection of the injected top 5 at this relative floor."""
    values: dict[str, list[float]] = defaultdict(list)
    for asked in questions:
        kept = _kept(asked, z, floor)
        if asked.kind == "none":
            values["injection"].append(float(bool(kept)))
            continue
        if kept:
            values["precision"].append(sum(h.relevant for h in kept) / len(kept))
        if asked.kind == "update":
            values["coverage"].append(float(any(h.states[1] for h in kept)))
        else:
            values["coverage"].append(sum(any(h.states[i] for h in kept) for i in (0, 1)) / 2)
    return {name: float(np.mean(v)) for name, v in values.items() if v}


def _objective(found: dict[str, float]) -> float:
    return found.get("precision", 0.0) + found.get("coverage", 0.0) - found.get("injection", 0.0)


def choose(questions: Sequence[Asked], model: str) -> list[tuple[str, float, dict[str, float]]]:
    """Leave-one-conversation-out over the dev questions: ``(held out, z chosen, its scores)``."""
    floor = CALIBRATED_FLOORS.get(model, -1.0)
    dev = [q for q in questions if q.split == "dev"]
    folds = []
    for user in sorted({q.user for q in dev}):
        train = [q for q in dev if q.user != user]
        chosen = max(GRID, key=lambda z: (_objective(scores(train, z, floor)), -z))
        folds.append((user, chosen, scores([q for q in dev if q.user == user], chosen, floor)))
    return folds


def spread(values: Sequence[float]) -> str:
    """``mean (min-max)``."""
    return f"{statistics.fmean(values):.3f} ({min(values):.3f}-{max(values):.3f})"
