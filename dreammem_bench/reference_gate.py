"""Choosing the reference gate's thresholds (:mod:`dreammem.recall.reference`) by folds.

Every question of the update suites (``dreammem bench updates``: shipped dev split and the
independent cases; update, keep and no-memory questions) is recalled with no relevance gate
at all, keeping each hit's cosine and how far it stands above the reference cosines on the
query side and on the memory side (``zq``, ``zm``). For thresholds ``(q, m)`` the hits are
then filtered as recall filters them (a hit found by time passes), giving the share of
no-memory questions injecting anything, coverage (the current value, both keep statements)
and precision of the injected top 5. Folds by conversation: on the other folds the pair
maximising coverage + precision - 2 x injection is chosen and scored on the fold left out.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.recall.reference import reference_set
from dreammem_bench.relative_gate import injected_scores
from dreammem_bench.updates import Conversation
from dreammem_bench.updates_run import write_conversation

__all__ = ["GRID", "Asked", "Seen", "choose", "collect", "scores"]

GRID = tuple(round(0.25 * n, 2) for n in range(0, 25))
"""Thresholds tried on each side: 0 to 6 robust standard deviations."""

_K = 5


@dataclass(frozen=True, slots=True)
class Seen:
    """One recalled hit: its cosine, its standing on both sides, and whether it is relevant."""

    cosine: float
    zq: float
    zm: float
    timed: bool
    words: int | None  # best rank on a path that matches the query's words
    relevant: bool
    states: tuple[bool, bool]


@dataclass(frozen=True, slots=True)
class Asked:
    """One question: its conversation, language, kind (update, keep, none) and hits."""

    user: str
    lang: str
    kind: str
    hits: tuple[Seen, ...]


def collect(convs: Sequence[Conversation], embedder: Embedder, splits: Iterable[str]) -> list[Asked]:
    """Write the conversations and recall every question of these splits with no relevance gate."""
    wanted = set(splits)
    conf = DreamMemConfig(recall=RecallConfig(relevance_floor=None, reference_floor=None, pinned_max_count=0))
    refs = reference_set(embedder)
    out: list[Asked] = []
    with tempfile.TemporaryDirectory() as tmp, DreamMemory(Path(tmp), embedder=embedder, config=conf) as mem:
        for conv in convs:
            write_conversation(mem, conv)
        for conv in convs:
            asked: list[tuple[str, str, str, str]] = [
                (c.question, c.kind, c.first, c.second) for c in conv.cases if c.split in wanted
            ]
            asked += [(q, "none", "", "") for q, split in conv.unrelated if split in wanted]
            for question, kind, first, second in asked:
                query = embedder.embed_query(question)
                floor = refs.query_floor(question, query, 0.0)
                result = mem.recall(question, user_id=conv.user_id, k=10, now=conv.asked_at)
                stored = mem.store.vectors_of(conv.user_id, embedder.name, [h.id for h in result])
                hits = []
                for hit in result:
                    if hit.id not in stored:
                        continue
                    cosine = float(stored[hit.id] @ query)
                    text = hit.record.content
                    need = refs.memory_floor(text, stored[hit.id], 1.0)
                    base = refs.memory_floor(text, stored[hit.id], 0.0)
                    said = (bool(first) and first in text, bool(second) and second in text)
                    words = min((r for p, r in hit.ranks.items() if p == "keyword"), default=None)
                    zq = (cosine - floor.mean) / floor.sd
                    zm = (cosine - base) / max(need - base, 1e-6)
                    hits.append(Seen(cosine, zq, zm, hit.timed, words, any(said), said))
                out.append(Asked(conv.user_id, conv.lang, kind, tuple(hits)))
    return out


def passes(hit: Seen, q: float, m: float, *, lexical: int = 0, query: bool = True) -> bool:
    """Whether a hit clears thresholds ``(q, m)`` (a hit found by time always does).

    One of the keyword path's best ``lexical`` hits needs only the memory side, when the
    ``query`` passes as a whole (some hit clears the query side).
    """
    if hit.timed or (hit.zq >= q and hit.zm >= m):
        return True
    return query and hit.words is not None and hit.words <= lexical and hit.zm >= m


def scores(questions: Sequence[Asked], q: float, m: float, lexical: int = 0) -> dict[str, float]:
    """Injection (no-memory questions), coverage and precision of the injected top 5."""

    def injected(asked: Asked) -> list[Seen]:
        query = any(h.zq >= q for h in asked.hits)
        return [h for h in asked.hits if passes(h, q, m, lexical=lexical, query=query)][:_K]

    return injected_scores((asked.kind, injected(asked)) for asked in questions)


def objective(found: dict[str, float]) -> float:
    """Coverage + precision - 2 x injection (a missing metric counts as its worst)."""
    return found.get("coverage", 0.0) + found.get("precision", 1.0) - 2 * found.get("injection", 0.0)


def choose(
    questions: Sequence[Asked], folds: int = 5, lexical: int = 0
) -> list[tuple[float, float, dict[str, float]]]:
    """Per fold (by conversation): the pair chosen on the others and its scores on the fold."""
    users = sorted({a.user for a in questions})
    out = []
    for f in range(folds):
        held = {u for n, u in enumerate(users) if n % folds == f}
        train = [a for a in questions if a.user not in held]
        test = [a for a in questions if a.user in held]
        best = max(
            ((q, m) for q in GRID for m in GRID),
            key=lambda pair: (round(objective(scores(train, pair[0], pair[1], lexical)), 6), -sum(pair)),
        )
        out.append((best[0], best[1], scores(test, best[0], best[1], lexical)))
    return out
