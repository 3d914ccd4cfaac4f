"""LoCoMo retrieval with and without the graph path, per graph backend.

Protocol (issue 3's, restricted to what the graph path changes): each conversation
is one user; every turn is one memory ``"<speaker>: <text>"`` (plus the image
caption), ``event_time`` its session's date, its ``dia_id`` kept in metadata. Every
question of categories 1-4 is recalled with k = 5 through three path sets in the
same process: ``graph`` alone, ``vector+keyword`` (fusion without the graph) and
``vector+keyword+graph``. A hit is a top-k memory from a gold evidence turn. The
same is run on every given graph backend: their numbers must agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.stores.base import GraphStore

__all__ = ["PATH_SETS", "LocomoGraphResult", "load_locomo", "run_locomo_graph", "summary"]

PATH_SETS: Mapping[str, tuple[str, ...]] = {
    "graph": ("graph",),
    "vector+keyword": ("vector", "keyword"),
    "vector+keyword+graph": ("vector", "keyword", "graph"),
}

_DIA = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True, slots=True)
class Question:
    """One LoCoMo question with its gold evidence turn ids."""

    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation: its turns (content, event time, dia id, speaker) and questions."""

    sample_id: str
    turns: tuple[tuple[str, datetime, str, str], ...]
    questions: tuple[Question, ...]


@dataclass(slots=True)
class LocomoGraphResult:
    """hit@k per path set and category for one backend (``n`` questions per category)."""

    backend: str
    k: int
    hits: dict[str, dict[str, float]] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)


def _session_time(text: str) -> datetime:
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_locomo(path: str | Path) -> list[Conversation]:
    """Read a LoCoMo JSON file (see its README): turns in order, questions with evidence."""
    conversations: list[Conversation] = []
    for conv in json.loads(Path(path).read_text(encoding="utf-8")):
        body = conv["conversation"]
        numbers = sorted(int(k.split("_")[1]) for k in body if re.fullmatch(r"session_\d+", k))
        turns: list[tuple[str, datetime, str, str]] = []
        for n in numbers:
            when = _session_time(body[f"session_{n}_date_time"])
            for turn in body[f"session_{n}"]:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares an image: {turn['blip_caption']}]"
                turns.append((text, when, turn["dia_id"], turn["speaker"]))
        known = {t[2] for t in turns}
        questions = []
        for qa in conv["qa"]:
            evidence = (
                frozenset(f"D{s}:{t}" for raw in qa.get("evidence", []) for s, t in _DIA.findall(str(raw)))
                & known
            )
            if evidence and int(qa["category"]) in (1, 2, 3, 4):
                questions.append(Question(str(qa["question"]), int(qa["category"]), evidence))
        conversations.append(Conversation(conv["sample_id"], tuple(turns), tuple(questions)))
    return conversations


def run_locomo_graph(
    conversations: Sequence[Conversation],
    embedder: Embedder,
    graphs: Mapping[str, Callable[[], GraphStore] | None],
    *,
    k: int = 5,
    progress: Callable[[str], None] | None = None,
) -> list[LocomoGraphResult]:
    """hit@k of each path set on each graph backend (a fresh in-memory store per backend).

    ``graphs`` maps a backend name to a factory, or to None for the embedded graph.
    """
    say = progress or (lambda _m: None)
    results = []
    config = DreamMemConfig().model_copy(
        update={"write": DreamMemConfig().write.model_copy(update={"extract_explicit": False})}
    )
    for backend, make_graph in graphs.items():
        result = LocomoGraphResult(backend, k)
        counts: dict[str, dict[str, int]] = {name: {} for name in PATH_SETS}
        graph = make_graph() if make_graph is not None else None
        with DreamMemory(None, config=config, embedder=embedder, graph=graph) as memory:
            for conv in conversations:
                user = f"locomo-{conv.sample_id}"
                if memory.graph is not None:
                    memory.graph.clear(user)
                say(f"{backend}: {conv.sample_id} ({len(conv.turns)} turns)")
                records = memory.add_many(
                    {
                        "content": text,
                        "user_id": user,
                        "speaker": speaker,
                        "event_time": when,
                        "metadata": {"dia_id": dia},
                    }
                    for text, when, dia, speaker in conv.turns
                )
                dia_of = {r.id: str(r.metadata["dia_id"]) for r in records}
                for question in conv.questions:
                    for name, paths in PATH_SETS.items():
                        found = memory.recall(question.text, user_id=user, k=k, paths=paths)
                        hit = any(dia_of.get(i) in question.evidence for i in found.ids[:k])
                        for bucket in (str(question.category), "1-4"):
                            counts[name][bucket] = counts[name].get(bucket, 0) + int(hit)
                            if name == "graph":
                                result.n[bucket] = result.n.get(bucket, 0) + 1
                if memory.graph is not None:
                    memory.graph.clear(user)
        result.hits = {
            name: {b: round(c / result.n[b], 4) for b, c in sorted(by.items())} for name, by in counts.items()
        }
        results.append(result)
    return results


def summary(results: Sequence[LocomoGraphResult]) -> list[dict[str, Any]]:
    """Rows for a table or JSON: one per backend and path set."""
    return [
        {"backend": r.backend, "paths": name, **{f"hit@{r.k} {b}": v for b, v in by.items()}}
        for r in results
        for name, by in r.hits.items()
    ]
