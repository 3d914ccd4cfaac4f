"""Calibrating the relevance floor (:mod:`dreammem.recall.gate`) on data.

English (MiniLM): every LoCoMo question (categories 1-4) is recalled without a floor
on its conversation's store, and so is every shipped question about a topic no
conversation holds (``data/absent_questions.json``). For a floor ``t`` the hits are
filtered as recall would filter them; the two numbers are hit@5 on the LoCoMo
questions (the evidence must survive) and the share of absent-topic questions that
still inject something. The floor is chosen by leave-one-conversation-out: on the
other conversations (and the other absent questions), the highest floor of the grid
whose hit@5 stays within ``tolerance`` of no floor; it is then scored on the
conversation (and absent questions) left out.

Chinese (e5): the shipped (memory, question) pairs (``data/zh_pairs.json``) form one
store; a question's own memory must pass, the Chinese absent-topic questions should
not. Five folds over the pairs: the highest floor that keeps ``keep`` of the own
memories of the training pairs, scored on the held-out pairs.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.recall.gate import passes_relevance, query_passes
from dreammem_bench.chinese import load_pairs
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import DreamMemMethod

__all__ = ["GRID", "FloorFold", "GateQuery", "collect_locomo", "leave_one_out", "load_absent", "zh_folds"]

GRID = tuple(round(0.2 + 0.025 * n, 3) for n in range(13))
"""MiniLM floors tried: 0.2 to 0.5."""


@dataclass(frozen=True, slots=True)
class GateQuery:
    """One recalled question: its hits' cosines (None: not a vector candidate) and evidence flags."""

    group: str
    absent: bool
    cosines: tuple[float | None, ...]
    evidence: tuple[bool, ...]
    vector_scores: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class FloorFold:
    """One held-out fold: the floor chosen without it and what it does on it."""

    held_out: str
    floor: float
    hit5_without: float
    hit5_with: float
    absent_injected: float
    details: dict[str, float] = field(default_factory=dict)


def load_absent() -> dict[str, list[str]]:
    """The shipped absent-topic questions, ``{"en": [...], "zh": [...]}``."""
    text = resources.files("dreammem_bench").joinpath("data/absent_questions.json").read_text("utf-8")
    data = json.loads(text)
    return {"en": list(data["en"]), "zh": list(data["zh"])}


def collect_locomo(
    conversations: Sequence[LocomoConversation], absent: Sequence[str], *, embedder: Embedder | None = None
) -> list[GateQuery]:
    """Recall every question (and every absent-topic question) of every conversation, no floor."""
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=None, pinned_max_count=0))
    method = DreamMemMethod(config, embedder=embedder)
    out: list[GateQuery] = []
    try:
        for conv in conversations:
            method.index(conv)
            asked = [(q.question, frozenset(q.evidence)) for q in conv.questions if q.category < 5]
            asked += [(q, frozenset()) for q in absent]
            for question, evidence in asked:
                result = method.memory.recall(question, user_id=conv.sample_id, k=10, now=conv.reference_time)
                hits = [h for h in result if not h.record.pinned]  # as the LoCoMo bench scores
                vector = [h.path_scores["vector"] for h in result if "vector" in h.path_scores]
                out.append(
                    GateQuery(
                        conv.sample_id,
                        not evidence,
                        tuple(h.path_scores.get("vector") for h in hits),
                        tuple(bool(method.sources(h.record) & evidence) for h in hits),
                        tuple(vector),
                    )
                )
    finally:
        method.close()
    return out


def _kept(query: GateQuery, floor: float) -> list[bool]:
    passes = query_passes(query.vector_scores, floor)
    return [
        ev
        for cos, ev in zip(query.cosines, query.evidence, strict=True)
        if passes_relevance(cos, floor=floor, query_passes=passes)
    ]


def _scores(queries: Sequence[GateQuery], floor: float | None) -> tuple[float, float]:
    """(hit@5 of the LoCoMo questions, share of absent questions injecting anything)."""
    asked = [q for q in queries if not q.absent]
    absent = [q for q in queries if q.absent]
    kept = (lambda q: list(q.evidence)) if floor is None else (lambda q: _kept(q, floor))
    hit5 = sum(any(kept(q)[:5]) for q in asked) / max(1, len(asked))
    injected = sum(bool(kept(q)) for q in absent) / max(1, len(absent))
    return hit5, injected


def leave_one_out(queries: Sequence[GateQuery], *, tolerance: float = 0.002) -> list[FloorFold]:
    """Choose the floor on all conversations but one, score it on that one.

    Absent questions are split into as many folds as there are conversations, so the
    held-out fold's absent questions were not used to choose its floor either.
    """
    groups = sorted({q.group for q in queries})
    slots = _absent_slots(queries)
    folds: list[FloorFold] = []
    for n, held in enumerate(groups):
        held_out = [
            (q.group == held and (not q.absent or slots[i] % len(groups) == n)) for i, q in enumerate(queries)
        ]
        train_mask = [
            (q.group != held and (not q.absent or slots[i] % len(groups) != n)) for i, q in enumerate(queries)
        ]
        test = [q for q, keep in zip(queries, held_out, strict=True) if keep]
        train = [q for q, keep in zip(queries, train_mask, strict=True) if keep]
        base, _ = _scores(train, None)
        chosen = max((t for t in GRID if _scores(train, t)[0] >= base - tolerance), default=GRID[0])
        without, _ = _scores(test, None)
        with_floor, injected = _scores(test, chosen)
        folds.append(FloorFold(held, chosen, without, with_floor, injected))
    return folds


def _absent_slots(queries: Sequence[GateQuery]) -> list[int]:
    """Each absent question's position among its conversation's absent questions (0 for others)."""
    seen: dict[str, int] = {}
    slots = []
    for q in queries:
        slots.append(seen.get(q.group, 0) if q.absent else 0)
        if q.absent:
            seen[q.group] = seen.get(q.group, 0) + 1
    return slots


def zh_folds(embedder: Embedder, *, keep: float = 0.95, folds: int = 5) -> list[FloorFold]:
    """Five folds over the Chinese pairs: the floor keeping ``keep`` of own memories, held out."""
    pairs = load_pairs()
    absent = load_absent()["zh"]
    memories = embedder.embed_documents([m for m, _ in pairs])
    own = np.array([float(embedder.embed_query(q) @ memories[i]) for i, (_, q) in enumerate(pairs)])
    best_absent = np.array([float(np.max(memories @ embedder.embed_query(q))) for q in absent])
    grid = sorted({round(float(v) - 0.0005, 4) for v in own})
    out: list[FloorFold] = []
    for n in range(folds):
        test = [i for i in range(len(pairs)) if i % folds == n]
        train = [i for i in range(len(pairs)) if i % folds != n]
        chosen = max((t for t in grid if np.mean(own[train] >= t) >= keep), default=grid[0])
        held_absent = [i for i in range(len(absent)) if i % folds == n]
        out.append(
            FloorFold(
                f"pairs fold {n + 1}",
                chosen,
                1.0,
                float(np.mean(own[test] >= chosen)),
                float(np.mean(best_absent[held_absent] >= chosen)),
            )
        )
    return out


def spread(values: Sequence[float]) -> str:
    """``mean (min-max)`` of the values."""
    return f"{statistics.fmean(values):.3f} ({min(values):.3f}-{max(values):.3f})"
