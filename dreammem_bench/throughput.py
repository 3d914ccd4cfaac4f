"""Ingest throughput and recall latency at a given store size, beside a plain baseline.

The workload is synthetic but deterministic: short chat turns with names, places,
amounts, dates and order numbers, drawn from a seeded generator, grouped into
sessions of 20 turns. DreamMem ingests them with ``add_many`` in batches (one
embedding batch and one transaction each) and answers queries with the full
``recall`` pipeline. The baseline, in the same process on the same texts and the same
embedder, is what a bare vector search does: encode in batches + FAISS ``add``, and
encode query + FAISS ``search``.

Ingest is reported as turns per wall-clock second and per CPU-second of the process
(``time.process_time``, all its threads). The two ingests run batch by batch in turn,
which one goes first alternating from batch to batch: on a shared machine the load
(and the encoder's speed with it) drifts within a run, and run one after the other
the two phases met different loads, moving the ratio by several points from run to run.
The queries alternate the same way: each question is answered by both, which one first
alternating from question to question.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import faiss
import numpy as np

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.memory import DreamMemory
from dreammem_bench.metrics import percentile

__all__ = [
    "BENCH_USER",
    "START",
    "Stopwatch",
    "ThroughputResult",
    "run_throughput",
    "synthetic_turns",
    "timed_ms",
    "turn_items",
]

BENCH_USER = "bench-user"
START = datetime(2024, 1, 1, tzinfo=UTC)
"""The first turn's time; turn ``n`` is said ``n`` minutes later."""
_NAMES = ("Mia", "Tom", "Aiko", "Ravi", "Lena", "Omar", "Sofia", "Jonas", "Chen", "Priya", "Luca", "Nora")
_PLACES = ("Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Austin", "Hanoi", "Oslo", "Lima", "Dublin")
_THINGS = (
    "GPU server", "laptop", "flight", "hotel", "standing desk", "camera", "bike", "concert ticket",
    "cello", "espresso machine", "monitor", "tent", "guitar", "phone", "course",
)  # fmt: skip
_TEMPLATES = (
    "{name} ordered a {thing} for {amount} USD, order #{order}.",
    "I met {name} in {place} on {date} to talk about the {thing}.",
    "Our budget for the {thing} must not exceed {amount} EUR.",
    "{name} said the {thing} arrives in {place} on {date}.",
    "I prefer to travel to {place} by train, not by plane.",
    "The {thing} from order #{order} was broken, {name} asked for a refund.",
    "Remind me to call {name} about the {thing} before {date}.",
    "{name} moved to {place} and now works on the {thing} project.",
    "We spent {amount} USD on the {thing} in {place} last month.",
    "{name} recommends the {thing} shop near the station in {place}.",
)


def synthetic_turns(count: int, *, seed: int = 7) -> list[str]:
    """``count`` deterministic, varied chat turns."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    turns = []
    for _ in range(count):
        template = rng.choice(_TEMPLATES)
        day = start + timedelta(days=rng.randrange(730))
        turns.append(
            template.format(
                name=rng.choice(_NAMES),
                place=rng.choice(_PLACES),
                thing=rng.choice(_THINGS),
                amount=rng.randrange(20, 90_000),
                order=rng.randrange(10_000, 99_999),
                date=day.strftime("%d %B %Y"),
            )
        )
    return turns


def turn_items(texts: Sequence[str], lo: int, count: int) -> list[dict[str, Any]]:
    """``add_many`` items for ``texts[lo : lo + count]``: one user, a turn a minute, 20 turns a session."""
    return [
        {
            "content": text,
            "user_id": BENCH_USER,
            "session_id": f"s{(lo + i) // 20}",
            "event_time": START + timedelta(minutes=lo + i),
        }
        for i, text in enumerate(texts[lo : lo + count])
    ]


def _queries(count: int, *, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    forms = (
        "What did {name} order?",
        "How much was spent on the {thing}?",
        "When does the {thing} arrive in {place}?",
        "Who moved to {place}?",
        "What is the budget for the {thing}?",
    )
    return [
        rng.choice(forms).format(
            name=rng.choice(_NAMES), thing=rng.choice(_THINGS), place=rng.choice(_PLACES)
        )
        for _ in range(count)
    ]


@dataclass(frozen=True, slots=True)
class ThroughputResult:
    """One system's numbers: ingest rate and recall latency at ``memories`` records."""

    name: str
    memories: int
    ingest_per_s: float
    p50_ms: float
    p95_ms: float
    ingest_per_cpu_s: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "memories": self.memories,
            "ingest_per_s": round(self.ingest_per_s, 1),
            "ingest_per_cpu_s": round(self.ingest_per_cpu_s, 1),
            "latency_ms": {"p50": round(self.p50_ms, 2), "p95": round(self.p95_ms, 2)},
        }


@dataclass(slots=True)
class Stopwatch:
    """Wall-clock and process CPU seconds summed over the calls it timed."""

    wall_s: float = 1e-9
    cpu_s: float = 1e-9

    def time(self, call: Callable[[], object]) -> None:
        """Run ``call`` and add its wall-clock and CPU time."""
        wall, cpu = time.perf_counter(), time.process_time()
        call()
        self.wall_s += time.perf_counter() - wall
        self.cpu_s += time.process_time() - cpu


def timed_ms(calls: Sequence[Callable[[], object]]) -> list[float]:
    """Milliseconds each call took, one after another."""
    out = []
    for call in calls:
        start = time.perf_counter()
        call()
        out.append((time.perf_counter() - start) * 1000)
    return out


def run_throughput(
    embedder: Embedder,
    *,
    memories: int = 10_000,
    queries: int = 200,
    batch_size: int = 256,
    k: int = 10,
    config: DreamMemConfig | None = None,
    on_step: Callable[[str], None] | None = None,
) -> list[ThroughputResult]:
    """Measure DreamMem and the plain baseline on the same texts and embedder.

    Returns:
        ``[dreammem, baseline]``.
    """
    texts = synthetic_turns(memories)
    asks = _queries(queries)
    step = on_step or (lambda _name: None)

    index = faiss.IndexFlatIP(embedder.dim)  # the baseline: encode in batches, add to a flat index
    with DreamMemory(None, config=config, embedder=embedder) as memory:

        def bare_add(lo: int) -> None:
            index.add(np.ascontiguousarray(embedder.embed_documents(texts[lo : lo + batch_size])))
            step("baseline ingest")

        def dreammem_add(lo: int) -> None:
            memory.add_many(turn_items(texts, lo, batch_size))
            step("dreammem ingest")

        base_clock, dm_clock = Stopwatch(), Stopwatch()
        for number, lo in enumerate(range(0, memories, batch_size)):
            turns = [(base_clock, bare_add), (dm_clock, dreammem_add)]
            for clock, add in reversed(turns) if number % 2 else turns:
                clock.time(functools.partial(add, lo))
        base_ingest, base_cpu = memories / base_clock.wall_s, memories / base_clock.cpu_s
        dm_ingest, dm_cpu = memories / dm_clock.wall_s, memories / dm_clock.cpu_s

        def bare_search(question: str) -> Callable[[], object]:
            return lambda: index.search(embedder.embed_query(question)[None, :], k)

        now = START + timedelta(minutes=memories + 1)

        def recall(question: str) -> Callable[[], object]:
            return lambda: memory.recall(question, user_id=BENCH_USER, k=k, now=now)

        base_lat: list[float] = []
        dm_lat: list[float] = []
        for number, question in enumerate(asks):
            answers = [(base_lat, bare_search(question)), (dm_lat, recall(question))]
            for out, call in reversed(answers) if number % 2 else answers:
                out.extend(timed_ms([call]))
        step("baseline recall")
        step("dreammem recall")
    return [
        ThroughputResult(
            "dreammem", memories, dm_ingest, percentile(dm_lat, 50), percentile(dm_lat, 95), dm_cpu
        ),
        ThroughputResult(
            "faiss+encoder",
            memories,
            base_ingest,
            percentile(base_lat, 50),
            percentile(base_lat, 95),
            base_cpu,
        ),
    ]
