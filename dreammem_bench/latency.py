"""Recall latency per stage, with each path switched off in turn, beside bare baselines.

The store is filled with deterministic synthetic conversation turns (names, actions,
objects, places, dates, order numbers; a share of them carrying time expressions),
embedded with the real model, so FAISS, FTS5 and the temporal path see realistic
sizes. The queries mix content questions with temporal ones ("what did I do last
week?", "when did Tom visit Lisbon?"). Every configuration runs the same queries in
the same process; the baselines are the bare query encoder and a bare exact FAISS
search, which no recall can beat, beside the store's own vector index (IVF past its
threshold) with its recall@10 against the exact search.

The bare encoder is timed twice: beside each recall of the ``all`` configuration (the
same query, encoder first on even queries and recall first on odd ones), which the
ratio over the encoder uses, and in a loop of its own after every configuration ran.
Two runs of a loop minutes apart on a shared machine differ by more than the paths
cost (``docs/BENCHMARKS.md``); paired samples see the same machine.

The module returns numbers; ``dreammem bench latency`` prints them.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from dreammem.embed.base import Embedder
from dreammem.embed.caching import CachingEmbedder
from dreammem.memory import DreamMemory
from dreammem.recall.recipe import PATHS
from dreammem.stores.faiss_index import FaissVectorIndex

__all__ = [
    "LatencyReport",
    "MainSentenceEmbedder",
    "StageStats",
    "build_store",
    "measure_latency",
    "percentile",
    "recall_at",
    "synthetic_queries",
    "synthetic_turns",
]

START = datetime(2023, 1, 2, 9, 0, tzinfo=UTC)
SPAN_DAYS = 540
TOTALS = ("total", "total-embed")
STAGES = ("embed", *PATHS, "gather", "fuse", "load", "rerank", "learned_rank", "order", "touch")
"""Every stage a recall may time: the recipe's paths (:data:`dreammem.recall.recipe.PATHS`) and the rest."""

_NAMES = "Ana Tom Mia Lee Sara Omar Ivan Nina Paul Yuki Ravi Lena Jon Gina Kai Eva Noah Zoe Luis Ada".split()
_ACTIONS = [
    ("bought", "buy"),
    ("fixed", "fix"),
    ("painted", "paint"),
    ("sold", "sell"),
    ("ordered", "order"),
    ("returned", "return"),
    ("borrowed", "borrow"),
    ("cleaned", "clean"),
    ("found", "find"),
    ("lost", "lose"),
    ("shipped", "ship"),
    ("booked", "book"),
]
_OBJECTS = (
    "bike guitar laptop camera sofa kayak tent printer lamp piano drone jacket boots "
    "telescope blender heater router watch backpack scooter"
).split()
_PLACES = (
    "Lisbon Berlin Oslo Kyoto Austin Porto Madrid Dublin Vienna Seoul Lima Quito Cairo Tunis Riga Cork"
).split()
_WHEN = ["yesterday", "last week", "last Saturday", "two days ago", "this morning", "last month", ""]
_EXTRAS = [
    "It cost {n} dollars.",
    "Order #{n} is on its way.",
    "We should do that again soon.",
    "The weather was great.",
    "I told {name} about it.",
    "",
]


@dataclass(frozen=True, slots=True)
class StageStats:
    """Latency of one stage over the measured queries, in milliseconds."""

    p50: float
    p95: float
    mean: float


@dataclass(slots=True)
class LatencyReport:
    """Everything one latency run measured.

    Attributes:
        memories: Records in the store (all users).
        users: Users the records are spread over.
        queries: Queries measured per configuration.
        ingest_per_s: Turns written per second while building (None when reused).
        baselines: Bare query encoding (``encoder only``: beside each recall of ``all``;
            ``encoder only (own loop)``: after every configuration), bare exact FAISS
            search, and the store's own vector index (IVF past its threshold) over the
            same user.
        ann_recall_at_10: Share of the index's top 10 that score at least the exact
            10th best (ties count as found): 1.0 when the index misses nothing.
        runs: Per configuration (``all``, ``-vector``, ...): stage name -> stats,
            with ``total`` for the whole recall.
    """

    memories: int
    users: int
    queries: int
    ingest_per_s: float | None
    baselines: dict[str, StageStats] = field(default_factory=dict)
    ann_recall_at_10: float | None = None
    runs: dict[str, dict[str, StageStats]] = field(default_factory=dict)

    def over_encoder(self) -> dict[str, float] | None:
        """Recall with every path (``all``) over the bare query encoder timed beside it: p50 and p95 ratios.

        Issue 16's target is p95 at most 1.5 at 3,000 memories. None without both runs.
        """
        recall, encoder = self.runs.get("all", {}).get("total"), self.baselines.get("encoder only")
        if recall is None or encoder is None or min(encoder.p50, encoder.p95) <= 0:
            return None
        return {"p50": recall.p50 / encoder.p50, "p95": recall.p95 / encoder.p95}

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form."""

        def stats(s: StageStats) -> dict[str, float]:
            return {"p50": round(s.p50, 3), "p95": round(s.p95, 3), "mean": round(s.mean, 3)}

        return {
            "memories": self.memories,
            "users": self.users,
            "queries": self.queries,
            "ingest_per_s": self.ingest_per_s,
            "baselines": {k: stats(v) for k, v in self.baselines.items()},
            "ann_recall_at_10": self.ann_recall_at_10,
            "runs": {name: {k: stats(v) for k, v in run.items()} for name, run in self.runs.items()},
            "over_encoder": {k: round(v, 3) for k, v in (self.over_encoder() or {}).items()} or None,
        }


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) by linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _stats(values: Sequence[float]) -> StageStats:
    return StageStats(percentile(values, 0.5), percentile(values, 0.95), statistics.fmean(values or [0.0]))


def _user(n: int) -> str:
    return f"user-{n:03d}"


def _sentence(rng: random.Random) -> str:
    name = rng.choice(_NAMES)
    done, _ = rng.choice(_ACTIONS)
    when = rng.choice(_WHEN) if rng.random() < 0.2 else ""
    return f"{name} {done} the {rng.choice(_OBJECTS)} in {rng.choice(_PLACES)} {when}".strip()


def synthetic_turns(
    memories: int, users: int, *, seed: int = 7, distinct: int = 0
) -> Iterator[dict[str, Any]]:
    """Deterministic conversation turns, spread evenly over users and ~18 months.

    Each turn is a main sentence plus an extra one (often with a number); each
    user's turns come in sessions of 20, in time order; about one turn in six says
    when it happened ("yesterday", "last week", ...).

    Args:
        memories: How many turns.
        users: How many users they are spread over.
        seed: Random seed.
        distinct: Draw main sentences from a pool of this many (0: a new one each turn).
    """
    rng = random.Random(seed)
    pool = [_sentence(rng) for _ in range(distinct)]
    per_user = max(1, memories // users)
    step = timedelta(days=SPAN_DAYS) / per_user
    for index in range(memories):
        user, position = index % users, index // users
        text = rng.choice(pool) if pool else _sentence(rng)
        extra = rng.choice(_EXTRAS).format(n=rng.randint(100, 99_999), name=rng.choice(_NAMES))
        yield {
            "content": f"{text}. {extra}".strip(),
            "user_id": _user(user),
            "session_id": f"s{position // 20}",
            "event_time": START + step * position,
        }


def synthetic_queries(count: int, *, seed: int = 11) -> list[str]:
    """Recall queries over the synthetic vocabulary; about a third mention time."""
    rng = random.Random(seed)
    forms: list[Callable[[], str]] = [
        lambda: f"what did {rng.choice(_NAMES)} {rng.choice(_ACTIONS)[1]} in {rng.choice(_PLACES)}?",
        lambda: f"where is my {rng.choice(_OBJECTS)}?",
        lambda: f"who has the {rng.choice(_OBJECTS)} now",
        lambda: f"order #{rng.randint(100, 99_999)}",
        lambda: f"how much did the {rng.choice(_OBJECTS)} cost",
        lambda: f"what did I do {rng.choice(_WHEN[:-1])}?",
        lambda: f"when did {rng.choice(_NAMES)} {rng.choice(_ACTIONS)[1]} the {rng.choice(_OBJECTS)}?",
        lambda: f"what did {rng.choice(_NAMES)} say last time about the {rng.choice(_OBJECTS)}",
        lambda: f"{rng.choice(_OBJECTS)} in {rng.choice(['May', 'June', 'March'])} 2023",
    ]
    return [rng.choice(forms)() for _ in range(count)]


class MainSentenceEmbedder(CachingEmbedder):
    """Bench-only: embeds a document by its main (first) sentence, each sentence once.

    With :func:`synthetic_turns` ``distinct=N`` a large store needs only N real model
    passes, so 100k memories build in minutes on two shared cores. The stored vectors
    are real vectors of the model (of each turn's main sentence) and queries are
    embedded in full; search cost does not depend on the vector values.
    """

    def __init__(self, inner: Embedder) -> None:
        super().__init__(inner, key=_main_sentence, cache_queries=False)


def _main_sentence(text: str) -> str:
    return text.split(". ", 1)[0].rstrip(".")


def build_store(
    memory: DreamMemory,
    memories: int,
    users: int,
    *,
    distinct: int = 0,
    batch: int = 1000,
    progress: Callable[[int], None] | None = None,
) -> float | None:
    """Fill an empty store with synthetic turns; returns turns/s (None if it was not empty)."""
    existing = memory.store.count()
    if existing:
        return None
    start = time.perf_counter()
    chunk: list[dict[str, Any]] = []
    for turn in synthetic_turns(memories, users, distinct=distinct):
        chunk.append(turn)
        if len(chunk) == batch:
            memory.add_many(chunk)
            if progress:
                progress(len(chunk))
            chunk = []
    if chunk:
        memory.add_many(chunk)
        if progress:
            progress(len(chunk))
    return memories / (time.perf_counter() - start)


def _configurations(paths: Sequence[str], ablate: bool = True) -> dict[str, list[str]]:
    out = {"all": list(paths)}
    for name in paths if ablate else ():
        out[f"-{name}"] = [p for p in paths if p != name]
    return out


def measure_latency(
    memory: DreamMemory,
    *,
    users: int,
    queries: int = 200,
    k: int = 5,
    warmup: int = 10,
    ingest_per_s: float | None = None,
    ablate: bool = True,
) -> LatencyReport:
    """Time recall per stage for every path configuration, plus bare baselines.

    Args:
        memory: A store built by :func:`build_store` (real embedder).
        users: How many users the store's records are spread over.
        queries: Queries measured per configuration.
        k: Hits per recall.
        warmup: Unmeasured queries first (model, dateparser and caches warm up).
        ingest_per_s: The build throughput, carried into the report.
        ablate: Also run with each path switched off in turn.
    """
    texts = synthetic_queries(queries + warmup)
    now = START + timedelta(days=SPAN_DAYS + 1)
    pipeline = memory.pipeline
    paths = [p for p in memory.config.recall.active_paths if p in pipeline.paths]
    report = LatencyReport(memory.store.count(), users, queries, ingest_per_s)
    beside: list[float] = []
    for name, selected in _configurations(paths, ablate).items():
        samples: dict[str, list[float]] = {}
        for n, text in enumerate(texts):
            paired = name == "all" and n % 2 == 0
            if paired:
                beside.append(_encode_ms(memory.embedder, text))
            result = memory.recall(text, user_id=_user(n % users), k=k, now=now, paths=selected)
            if name == "all" and not paired:
                beside.append(_encode_ms(memory.embedder, text))
            if n < warmup:
                continue
            for stage, value in result.timings_ms.items():
                samples.setdefault(stage, []).append(value)
            timings = result.timings_ms
            samples.setdefault("total-embed", []).append(timings["total"] - timings.get("embed", 0.0))
        report.runs[name] = {s: _stats(v) for s, v in samples.items() if s in (*STAGES, *TOTALS)}
    own, report.ann_recall_at_10 = _baselines(memory, texts[warmup:])
    report.baselines = {"encoder only": _stats(beside[warmup:]), **own} if beside else own
    return report


def _encode_ms(embedder: Embedder, text: str) -> float:
    """Milliseconds to embed one query."""
    start = time.perf_counter()
    embedder.embed_query(text)
    return (time.perf_counter() - start) * 1000


def _baselines(memory: DreamMemory, texts: Sequence[str]) -> tuple[dict[str, StageStats], float]:
    """The bare query encoder, a bare exact FAISS search and the store's index, for one user.

    Returns the timings and the index's recall@10 against the exact search.
    """
    embedder = memory.embedder
    user = _user(0)
    blocks = [m for u, _, m in memory.store.iter_active_vectors(embedder.name, embedder.dim) if u == user]
    bare = faiss.IndexFlatIP(embedder.dim)
    bare.add(np.ascontiguousarray(np.concatenate(blocks), dtype=np.float32))
    index = memory.vector_index
    limit = memory.config.recall.candidates_per_path
    encode: list[float] = []
    search: list[float] = []
    own: list[float] = []
    recalls: list[float] = []
    for text in texts:
        start = time.perf_counter()
        vector = embedder.embed_query(text)
        encode.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        exact, _ = bare.search(vector.reshape(1, -1), limit)
        search.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        found = index.search(user, vector, limit)
        own.append((time.perf_counter() - start) * 1000)
        recalls.append(recall_at(found, exact[0], 10))
    approximate = isinstance(index, FaissVectorIndex) and index.is_approximate(user)
    kind = (
        f"ivf, nprobe {index.probes(user)}"
        if isinstance(index, FaissVectorIndex) and approximate
        else "exact"
    )
    return {
        "encoder only (own loop)": _stats(encode),
        f"bare faiss flat ({bare.ntotal} vectors)": _stats(search),
        f"store's vector index ({kind})": _stats(own),
    }, statistics.fmean(recalls or [1.0])


def recall_at(found: Sequence[tuple[int, float]], exact_scores: npt.NDArray[np.float32], k: int) -> float:
    """Share of the first ``k`` found that score at least the exact k-th best.

    Ties count as found: with duplicate vectors, any of the tied ids is a right answer.
    """
    want = min(k, len(exact_scores))
    if want == 0:
        return 1.0
    floor = float(exact_scores[want - 1]) - 1e-5
    return sum(1 for _, score in found[:want] if score >= floor) / want
