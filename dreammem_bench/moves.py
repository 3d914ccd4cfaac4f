"""The moves benchmark: people who move again and again, in one user's store.

The store holds the synthetic turns of ``bench throughput`` (one user, one turn a minute);
about one line in ten says "NAME moved to PLACE and now works on ...", so each of the
12 names moves some 25 times. The write path marks an earlier move possibly outdated by
later ones, and recall puts the current value before an older hit it finds
(:mod:`dreammem.recall.current`). Two kinds of question, each scored on ``recall(k=10)``
and on a plain vector top 10 over the same turns (encoder + flat FAISS):

* "Who moved to PLACE?": every line saying someone moved to PLACE answers it.
  ``found@10``: the share of those lines in the top 10 (of at most 10).
* "Where does NAME live now?": ``current@3``: NAME's last move is among the first 3
  and before every earlier move of NAME shown.

``pulled@10``: how many of the 10 no path found (current values added before an older
hit): the room they take from lines that match the question.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import faiss
import numpy as np

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem.recall.current import CURRENT_PATHS
from dreammem_bench.throughput import BENCH_USER, START, synthetic_turns, turn_items

__all__ = ["MovesScore", "moves", "run_moves", "score_moves"]

_MOVE = re.compile(r"^(?P<name>\w+) moved to (?P<place>\w+) ")

Shown = tuple[list[str], int]
"""The texts a system shows for a question, best first, and how many no path found."""
Scores = tuple[list[float], list[float], list[float]]
"""Per question: found@k (one per place), current@3 (one per name), pulled (one per question)."""


@dataclass(frozen=True, slots=True)
class MovesScore:
    """One system's means over the questions of every store."""

    system: str
    found_at_10: float
    current_at_3: float
    pulled_at_10: float
    questions: int

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready."""
        return {
            "found@10": round(self.found_at_10, 4),
            "current@3": round(self.current_at_3, 4),
            "pulled@10": round(self.pulled_at_10, 3),
            "questions": self.questions,
        }


def moves(texts: Sequence[str]) -> list[tuple[str, str, str]]:
    """``(name, place, line)`` of every move line, in the order said."""
    return [(m["name"], m["place"], t) for t in texts if (m := _MOVE.match(t))]


def score_moves(texts: Sequence[str], ask: Callable[[str], Shown], k: int = 10) -> Scores:
    """Per question: found@k of each place, current@3 of each name, pulled of every question."""
    said = moves(texts)
    found: list[float] = []
    current: list[float] = []
    pulled: list[float] = []
    for place in sorted({p for _, p, _ in said}):
        answers = {line for _, p, line in said if p == place}
        shown, added = ask(f"Who moved to {place}?")
        found.append(len(answers & set(shown[:k])) / min(k, len(answers)))
        pulled.append(added)
    for name in sorted({n for n, _, _ in said}):
        lines = [line for n, _, line in said if n == name]
        last, earlier = lines[-1], set(lines[:-1]) - {lines[-1]}
        shown, added = ask(f"Where does {name} live now?")
        first_earlier = min((i for i, s in enumerate(shown) if s in earlier), default=len(shown))
        current.append(float(last in shown[:3] and shown.index(last) < first_earlier))
        pulled.append(added)
    return found, current, pulled


def run_moves(
    embedder: Embedder,
    *,
    memories: int = 3000,
    seeds: Sequence[int] = (7, 8, 9),
    batch_size: int = 256,
    config: DreamMemConfig | None = None,
    on_step: Callable[[str], None] | None = None,
) -> list[MovesScore]:
    """Score DreamMem and the plain vector top 10 on one store per seed.

    Returns:
        ``[dreammem, vector]``.
    """
    step = on_step or (lambda _name: None)
    scores: dict[str, Scores] = {"dreammem": ([], [], []), "vector": ([], [], [])}
    for seed in seeds:
        texts = synthetic_turns(memories, seed=seed)
        with DreamMemory(None, config=config, embedder=embedder) as memory:
            for lo in range(0, memories, batch_size):
                memory.add_many(turn_items(texts, lo, batch_size))
            step("store")
            now = START + timedelta(minutes=memories + 1)

            def ours(question: str, memory: DreamMemory = memory, now: datetime = now) -> Shown:
                hits = memory.recall(question, user_id=BENCH_USER, k=10, now=now).hits
                return [h.record.content for h in hits], sum(h.paths == CURRENT_PATHS for h in hits)

            _add(scores["dreammem"], score_moves(texts, ours))
        index = faiss.IndexFlatIP(embedder.dim)
        index.add(np.ascontiguousarray(embedder.embed_documents(texts), dtype=np.float32))

        def bare(question: str, texts: Sequence[str] = texts, index: faiss.IndexFlatIP = index) -> Shown:
            _, ids = index.search(embedder.embed_query(question)[None, :], 10)
            return [texts[i] for i in ids[0] if i >= 0], 0

        _add(scores["vector"], score_moves(texts, bare))
        step("baseline")
    return [
        MovesScore(
            system,
            float(np.mean(found)),
            float(np.mean(current)),
            float(np.mean(pulled)),
            len(pulled),
        )
        for system, (found, current, pulled) in scores.items()
    ]


def _add(into: Scores, values: Scores) -> None:
    for held, more in zip(into, values, strict=True):
        held.extend(more)
