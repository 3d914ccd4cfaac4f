"""Run the update benchmark: DreamMem (after writing, after a dream) against two baselines.

Methods, all in one run on the same conversations:

* ``dreammem``: :class:`~dreammem.DreamMemory` as shipped; the injected block is
  what ``recall(k=5)`` returns; an older hit is *marked* when it carries a
  possibly-outdated mark (``dreammem.write.relations``) naming an active record.
* ``vector``: plain vector top-5 over every stored message, as a LangGraph store or
  LlamaIndex vector memory gives; everything found is injected, nothing is marked.
* ``vector+recency``: the same with a recency bonus (0.1 x 0.5^(age / 7 days)).

Phases for DreamMem: ``write`` (after the conversations), ``dream-rules`` (after one
dream per user with no LLM), ``dream-llm`` (after one with the scripted dream LLM).

Given a ``cases`` list, :func:`run_updates` also appends one :class:`CaseResult` per
question, method and phase (what was injected, marked or not, and its metrics), so a
dream that breaks a case shows up by comparing the case after writing and after it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.types import MemoryRecord, Status
from dreammem.write.relations import possibly_outdated_by
from dreammem_bench.scripted_llm import ScriptedDreamLLM
from dreammem_bench.updates import Case, Conversation, Suite

__all__ = ["METRICS", "CaseResult", "Row", "marked", "run_updates", "score_case", "write_conversation"]

METRICS = (
    "current@3",
    "stale_suppressed",
    "false_supersede",
    "filler_top3",
    "unrelated_injection",
    "precision",
    "coverage",
)
_K = 5
_PREFIX = re.compile(r"^\s*(?:user|assistant)\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Shown:
    """One injected memory as the metrics see it."""

    content: str
    marked: bool


@dataclass(frozen=True, slots=True)
class Row:
    """One metric for one method, phase, language and split."""

    method: str
    phase: str
    lang: str
    split: str
    metric: str
    value: float
    n: int


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One question of one method and phase: what was injected and how it scored.

    ``kind`` is ``update``, ``keep`` or ``none`` (a question with no relevant memory).
    """

    method: str
    phase: str
    user_id: str
    lang: str
    split: str
    kind: str
    family: str
    question: str
    metrics: dict[str, float]
    shown: list[tuple[str, bool]]


Recaller = Callable[[Conversation, str], list[Shown]]


def _states(content: str, statement: str) -> bool:
    return statement in content


def _is_filler(content: str, filler: set[str]) -> bool:
    parts = [_PREFIX.sub("", p).strip() for p in re.split(r";\s*|\n", content)]
    parts = [p for p in parts if p]
    return bool(parts) and all(p in filler for p in parts)


def score_case(case: Case, shown: Sequence[Shown], filler: set[str]) -> dict[str, float]:
    """The per-question metrics of an update or keep case."""
    top3 = shown[:3]
    out: dict[str, float] = {"filler_top3": float(any(_is_filler(s.content, filler) for s in top3))}
    if case.kind == "update":
        new = [i for i, s in enumerate(shown) if _states(s.content, case.second)]
        # The assistant's echo of the old value ("Got it, email it is.") is stale like the old one.
        stale = [x for x in (case.first, case.echo) if x]
        old = [i for i, s in enumerate(shown) if any(_states(s.content, x) for x in stale) and i not in new]
        out["current@3"] = float(bool(new) and new[0] < 3 and (not old or new[0] < old[0]))
        out["stale_suppressed"] = float(all(shown[i].marked for i in old))
        relevant = {i for i in new} | {i for i in old if shown[i].marked}
        out["coverage"] = float(bool(new))
    else:
        both = (case.first, case.second)
        hits = [i for i, s in enumerate(shown) if any(_states(s.content, x) for x in both)]
        relevant = set(hits)
        out["coverage"] = sum(any(_states(s.content, x) for s in shown) for x in both) / 2
    if shown:
        out["precision"] = len(relevant) / len(shown)
    return out


def _false_supersede(memory: DreamMemory, conv: Conversation, case: Case) -> float:
    records = memory.get_all(user_id=conv.user_id, status=None, limit=1000)
    for statement in (case.first, case.second):
        stating = [r for r in records if _states(r.content, statement)]
        if stating and not any(r.is_active for r in stating):
            return 1.0
    return 0.0


def _score(
    method: str,
    phase: str,
    convs: Sequence[Conversation],
    recall: Recaller,
    filler: set[str],
    memory: DreamMemory | None,
    cases: list[CaseResult] | None = None,
) -> list[Row]:
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)

    def add(
        conv: Conversation,
        split: str,
        case: Case | None,
        question: str,
        metrics: dict[str, float],
        shown: Sequence[Shown],
    ) -> None:
        for metric, value in metrics.items():
            values[(conv.lang, split, metric)].append(value)
        if cases is not None:
            kind, family = (case.kind, case.family) if case is not None else ("none", "")
            shown_pairs = [(s.content, s.marked) for s in shown]
            cases.append(
                CaseResult(
                    method,
                    phase,
                    conv.user_id,
                    conv.lang,
                    split,
                    kind,
                    family,
                    question,
                    metrics,
                    shown_pairs,
                )
            )

    for conv in convs:
        for case in conv.cases:
            shown = recall(conv, case.question)
            metrics = score_case(case, shown, filler)
            if case.kind == "keep" and memory is not None:
                metrics["false_supersede"] = _false_supersede(memory, conv, case)
            add(conv, case.split, case, case.question, metrics, shown)
        for question, split in conv.unrelated:
            shown = recall(conv, question)
            metrics = {
                "unrelated_injection": float(bool(shown)),
                "filler_top3": float(any(_is_filler(s.content, filler) for s in shown[:3])),
            }
            add(conv, split, None, question, metrics, shown)
    return [
        Row(method, phase, lang, split, metric, float(np.mean(v)), len(v))
        for (lang, split, metric), v in sorted(values.items())
    ]


def write_conversation(memory: DreamMemory, conv: Conversation) -> None:
    """Write one conversation's three sessions, each as one batch."""
    for session in ("s1", "s2", "s3"):
        turns = [t for t in conv.turns if t.session == session]
        memory.add_many(
            [
                {
                    "content": t.content,
                    "user_id": conv.user_id,
                    "role": t.role,
                    "session_id": f"{conv.user_id}-{session}",
                    "event_time": t.time,
                }
                for t in turns
            ]
        )


def marked(memory: DreamMemory, user_id: str, record: MemoryRecord) -> bool:
    """Whether a recalled record carries a possibly-outdated mark naming an active record."""
    newer = possibly_outdated_by(record)
    if not newer:
        return False
    found = memory.store.get(user_id, list(newer))
    return any(r.status is Status.ACTIVE for r in found)


def _dreammem_recaller(memory: DreamMemory) -> Recaller:
    def recall(conv: Conversation, question: str) -> list[Shown]:
        result = memory.recall(question, user_id=conv.user_id, k=_K, now=conv.asked_at)
        return [Shown(h.record.content, marked(memory, conv.user_id, h.record)) for h in result.hits]

    return recall


def _vector_recaller(embedder: Embedder, convs: Sequence[Conversation], recency: float) -> Recaller:
    stored = {}
    for conv in convs:
        texts = [t.content for t in conv.turns]
        ages = np.array([(conv.asked_at - t.time).total_seconds() / 86_400 for t in conv.turns])
        stored[conv.user_id] = (texts, embedder.embed_documents(texts), recency * 0.5 ** (ages / 7))

    def recall(conv: Conversation, question: str) -> list[Shown]:
        texts, matrix, bonus = stored[conv.user_id]
        scores = matrix @ embedder.embed_query(question) + bonus
        return [Shown(texts[i], False) for i in np.argsort(-scores)[:_K]]

    return recall


def run_updates(
    suite: Suite,
    convs: Sequence[Conversation],
    embedders: Mapping[str, Embedder],
    workdir: Path,
    *,
    progress: Callable[[str], None] = lambda _: None,
    cases: list[CaseResult] | None = None,
) -> list[Row]:
    """Every method and phase on the conversations; one embedder per language.

    ``cases``: see the module docstring.
    """
    filler = {f for lines in suite.filler.values() for f in lines}
    rows: list[Row] = []
    for lang, embedder in embedders.items():
        mine = [c for c in convs if c.lang == lang]
        if not mine:
            continue
        for name, recency in (("vector", 0.0), ("vector+recency", 0.1)):
            progress(f"{lang} {name}")
            rows += _score(
                name, "write", mine, _vector_recaller(embedder, mine, recency), filler, None, cases
            )
        for variant, llm in (("rules", None), ("llm", ScriptedDreamLLM())):
            with DreamMemory(workdir / f"{lang}-{variant}", embedder=embedder, llm=llm) as memory:
                for conv in mine:
                    write_conversation(memory, conv)
                if variant == "rules":
                    progress(f"{lang} dreammem write")
                    rows += _score(
                        "dreammem", "write", mine, _dreammem_recaller(memory), filler, memory, cases
                    )
                for conv in mine:
                    memory.dream(user_id=conv.user_id, now=conv.asked_at)
                progress(f"{lang} dreammem dream-{variant}")
                rows += _score(
                    "dreammem", f"dream-{variant}", mine, _dreammem_recaller(memory), filler, memory, cases
                )
    return rows
