"""``bench updates --sources lme``: LongMemEval dev knowledge-update questions as an update source.

Cases nobody on the project wrote: each knowledge-update question of the LongMemEval
``dev`` split (:data:`~dreammem_bench.lme_cli.SPLITS`; the held questions are never
read here) whose evidence turns lie in at least two sessions. The evidence turn of the
latest session holds the current value, those of earlier sessions the older one.

* ``dreammem``: the haystack is written through the public API exactly as
  ``bench longmemeval`` writes it (:class:`~dreammem_bench.lme_methods.DreamMemHaystack`,
  which shares that bench's vector cache); ``recall(k=5)`` at the question's date is
  what is injected, pinned memories included. Phases: ``write``, then ``dream-rules``
  (one dream with no LLM on the same store).
* ``vector``: the top 5 turns by MiniLM cosine, nothing marked.

Metrics keep the names of ``bench updates`` where they apply (:func:`score_lme_update`):
``current@3`` (the latest evidence turn is in the top 3 and every earlier evidence turn
above it is marked as possibly outdated), ``stale_suppressed`` (every earlier evidence
turn shown is marked), ``coverage`` (the latest evidence turn is shown) and, for DreamMem,
``false_supersede`` (the latest evidence turn was superseded). A dream summary shown
counts for every turn it was made from. ``precision`` and ``filler_top3`` do not apply:
the other turns of a haystack are not filler.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.types import MemoryRecord, Status
from dreammem_bench.lme_cli import SPLITS
from dreammem_bench.lme_methods import DreamMemHaystack, MiniLMTurns
from dreammem_bench.longmemeval import LmeQuestion, load_longmemeval
from dreammem_bench.updates_run import CaseResult, Row, marked

__all__ = [
    "LME_SOURCE",
    "LME_SPLIT",
    "LmeUpdate",
    "ShownTurn",
    "as_update",
    "lme_updates",
    "load_lme_updates",
    "run_lme_updates",
    "score_lme_update",
]

LME_SOURCE = "lme"
LME_SPLIT = "lme-dev"
_K = 5


@dataclass(frozen=True, slots=True)
class LmeUpdate:
    """A knowledge-update question: its latest evidence turn and the earlier ones."""

    question: LmeQuestion
    latest: str
    earlier: frozenset[str]


@dataclass(frozen=True, slots=True)
class ShownTurn:
    """One injected memory: the turns it holds (its own, or a dream summary's sources), marked or not."""

    turns: frozenset[str]
    content: str
    marked: bool


def as_update(question: LmeQuestion) -> LmeUpdate | None:
    """The question as an update case, or None when it is not one (another type, one evidence session)."""
    if question.question_type != "knowledge-update" or question.abstention:
        return None
    gold = [t for t in question.turns if t.has_answer]  # sessions are in time order
    if len({t.session_id for t in gold}) < 2:
        return None
    latest = gold[-1]
    earlier = frozenset(t.turn_id for t in gold if t.session_id != latest.session_id)
    return LmeUpdate(question, latest.turn_id, earlier)


def lme_updates(questions: Sequence[LmeQuestion]) -> list[LmeUpdate]:
    """The update cases among the dev questions of a file's questions (given in file order)."""
    dev = [q for i, q in enumerate(questions) if SPLITS["dev"](i)]
    return [u for u in map(as_update, dev) if u is not None]


def score_lme_update(update: LmeUpdate, shown: Sequence[ShownTurn]) -> dict[str, float]:
    """``current@3``, ``stale_suppressed`` and ``coverage`` of one question (module docstring)."""
    new = [i for i, s in enumerate(shown) if update.latest in s.turns]
    old = [i for i, s in enumerate(shown) if s.turns & update.earlier and i not in new]
    current = bool(new) and new[0] < 3 and all(shown[i].marked for i in old if i < new[0])
    return {
        "current@3": float(current),
        "stale_suppressed": float(all(shown[i].marked for i in old)),
        "coverage": float(bool(new)),
    }


Recall = Callable[[LmeUpdate], list[ShownTurn]]


def _dreammem_recall(haystack: DreamMemHaystack) -> Recall:
    def recall(update: LmeUpdate) -> list[ShownTurn]:
        memory = haystack.memory
        assert memory is not None
        question = update.question
        hits = memory.recall(question.question, user_id=question.question_id, k=_K, now=question.date)
        return [
            ShownTurn(_turns(memory, r), r.content, marked(memory, question.question_id, r))
            for r in (hit.record for hit in hits)
        ]

    return recall


def _turns(memory: DreamMemory, record: MemoryRecord) -> frozenset[str]:
    """The haystack turns a record was written from: its own, else those of its sources."""
    own = record.metadata.get("turn_id")
    if own is not None:
        return frozenset({str(own)})
    sources = memory.store.get(record.user_id, list(record.provenance))
    return frozenset(str(p.metadata["turn_id"]) for p in sources if "turn_id" in p.metadata)


def _vector_recall(minilm: MiniLMTurns) -> Recall:
    def recall(update: LmeUpdate) -> list[ShownTurn]:
        minilm.index(update.question)
        by_id = {t.turn_id: t.content for t in update.question.turns}
        return [
            ShownTurn(frozenset({str(t)}), by_id[str(t)], False) for _, t in minilm.rank(update.question, _K)
        ]

    return recall


def _latest_superseded(memory: DreamMemory, update: LmeUpdate) -> float:
    """1 when the latest evidence turn was replaced (superseded; a dream's archiving is no replacement)."""
    records = memory.get_all(user_id=update.question.question_id, status=Status.SUPERSEDED, limit=10_000)
    return float(any(r.metadata.get("turn_id") == update.latest for r in records))


def run_lme_updates(
    updates: Sequence[LmeUpdate],
    embedder: Embedder,
    *,
    config: DreamMemConfig | None = None,
    progress: Callable[[str], None] = lambda _: None,
    cases: list[CaseResult] | None = None,
) -> list[Row]:
    """Every method and phase on the update cases (module docstring); one row per metric."""
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)

    def add(
        method: str, phase: str, update: LmeUpdate, metrics: dict[str, float], shown: list[ShownTurn]
    ) -> None:
        for metric, value in metrics.items():
            values[(method, phase, metric)].append(value)
        if cases is not None:
            question = update.question
            pairs = [(s.content, s.marked) for s in shown]
            cases.append(
                CaseResult(
                    method,
                    phase,
                    question.question_id,
                    "en",
                    LME_SPLIT,
                    "update",
                    "lme",
                    question.question,
                    metrics,
                    pairs,
                )
            )

    vector = _vector_recall(MiniLMTurns(embedder))
    haystack = DreamMemHaystack(config or DreamMemConfig(), embedder)
    dream_recall = _dreammem_recall(haystack)
    for number, update in enumerate(updates, 1):
        progress(f"lme {number}/{len(updates)} {update.question.question_id}")
        shown = vector(update)
        add("vector", "write", update, score_lme_update(update, shown), shown)
        haystack.index(update.question)
        memory = haystack.memory
        assert memory is not None
        for phase in ("write", "dream-rules"):
            if phase == "dream-rules":
                memory.dream(user_id=update.question.question_id, now=update.question.date)
            shown = dream_recall(update)
            metrics = score_lme_update(update, shown) | {
                "false_supersede": _latest_superseded(memory, update)
            }
            add("dreammem", phase, update, metrics, shown)
    haystack.close()
    return [
        Row(method, phase, "en", LME_SPLIT, metric, float(np.mean(v)), len(v))
        for (method, phase, metric), v in sorted(values.items())
    ]


def load_lme_updates(path: Path) -> list[LmeUpdate]:
    """The update cases of a LongMemEval file's dev split."""
    return lme_updates(load_longmemeval(path))
