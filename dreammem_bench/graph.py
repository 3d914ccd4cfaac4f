"""``dreammem bench graph``: the embedded graph against Neo4j on the same synthetic data.

For each size, one user's graph of ``size`` memories is written to every backend in
batches (write throughput), then the same random queries walk it 1 and 2 hops
(latency p50/p95 of :meth:`GraphStore.neighbors`). The data mimics conversation
memory: every memory mentions the user's own name with some probability (a hub),
plus two or three entities drawn from a Zipf-like vocabulary, and one memory in ten
states a relation between two of them. Queries start from one or two non-hub
entities. The two backends must also return the same neighbours (``agreement``).
"""

from __future__ import annotations

import logging
import random
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from dreammem.stores.base import GraphEntity, GraphItem, GraphRelation, GraphStore
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.sqlite import SQLiteRecordStore

__all__ = ["BackendResult", "GraphBenchConfig", "make_items", "make_queries", "run_graph_bench"]

log = logging.getLogger(__name__)

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class GraphBenchConfig:
    """What to measure.

    Attributes:
        sizes: Memories in the graph, one run per size.
        queries: Queries timed per hop count.
        batch: Memories per write call.
        hub_share: Share of memories that mention the user's own name.
        seed: Seed of the synthetic data and the queries.
        limit: Neighbours asked for per query.
    """

    sizes: tuple[int, ...] = (10_000, 100_000)
    queries: int = 200
    batch: int = 500
    hub_share: float = 0.3
    seed: int = 0
    limit: int = 30


@dataclass(slots=True)
class BackendResult:
    """Numbers of one backend at one size."""

    backend: str
    size: int
    write_per_s: float
    one_hop_ms: dict[str, float] = field(default_factory=dict)
    two_hop_ms: dict[str, float] = field(default_factory=dict)
    mean_hits_two_hop: float = 0.0
    agreement: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return asdict(self)


def make_items(size: int, *, hub_share: float = 0.3, seed: int = 0) -> list[GraphItem]:
    """Synthetic memories: a hub name, Zipf-distributed entities, a few relations."""
    rng = random.Random(seed)
    vocabulary = max(50, size // 5)
    weights = [1.0 / (rank + 1) ** 1.1 for rank in range(vocabulary)]
    names = [f"Entity {i}" for i in range(vocabulary)]
    hub = GraphEntity("mia", "Mia")
    start = datetime(2024, 1, 1, tzinfo=UTC)
    items: list[GraphItem] = []
    for n in range(size):
        picked = {i: None for i in rng.choices(range(vocabulary), weights=weights, k=rng.choice((2, 3)))}
        entities = [GraphEntity(names[i].casefold(), names[i]) for i in picked]
        if rng.random() < hub_share:
            entities.append(hub)
        relations: tuple[GraphRelation, ...] = ()
        if len(entities) >= 2 and rng.random() < 0.1:
            relations = (GraphRelation(entities[0].key, "related_to", entities[1].key),)
        items.append(GraphItem(f"m{n:07d}", tuple(entities), relations, start + timedelta(minutes=n)))
    return items


def make_queries(items: Sequence[GraphItem], count: int, *, seed: int = 0) -> list[list[str]]:
    """One or two entity keys per query, drawn from the mentions (so frequent ones are asked more)."""
    rng = random.Random(seed + 1)
    pool = [e.key for item in items for e in item.entities if e.key != "mia"]
    return [rng.sample(pool, k=rng.choice((1, 2))) for _ in range(count)]


def _percentiles(samples: Sequence[float]) -> dict[str, float]:
    values = np.asarray(samples, dtype=np.float64)
    return {
        "p50": round(float(np.percentile(values, 50)), 3),
        "p95": round(float(np.percentile(values, 95)), 3),
    }


def _measure(
    name: str,
    graph: GraphStore,
    user_id: str,
    items: Sequence[GraphItem],
    queries: Sequence[Sequence[str]],
    config: GraphBenchConfig,
) -> tuple[BackendResult, list[list[str]]]:
    start = time.perf_counter()
    for offset in range(0, len(items), config.batch):
        graph.upsert(user_id, items[offset : offset + config.batch])
    write_s = time.perf_counter() - start
    result = BackendResult(name, len(items), round(len(items) / write_s, 1))
    graph.neighbors(user_id, queries[0], hops=2, limit=config.limit)  # warm caches once
    answers: list[list[str]] = []
    for hops in (1, 2):
        timings: list[float] = []
        for keys in queries:
            t0 = time.perf_counter()
            found = graph.neighbors(user_id, keys, hops=hops, limit=config.limit)
            timings.append((time.perf_counter() - t0) * 1000)
            if hops == 2:
                answers.append([n.memory_id for n in found])
        if hops == 1:
            result.one_hop_ms = _percentiles(timings)
        else:
            result.two_hop_ms = _percentiles(timings)
    result.mean_hits_two_hop = round(sum(map(len, answers)) / max(1, len(answers)), 1)
    return result, answers


def run_graph_bench(
    config: GraphBenchConfig,
    *,
    neo4j_uri: str | None = None,
    progress: Progress | None = None,
) -> list[BackendResult]:
    """Measure the embedded graph, and Neo4j when a URI is given, at each size.

    Neo4j data is written under a fresh user id and removed afterwards.
    """
    say = progress or (lambda _message: None)
    results: list[BackendResult] = []
    for size in config.sizes:
        items = make_items(size, hub_share=config.hub_share, seed=config.seed)
        queries = make_queries(items, config.queries, seed=config.seed)
        user_id = f"bench-{uuid.uuid4().hex[:8]}"
        with tempfile.TemporaryDirectory(prefix="dreammem-graph-bench-") as tmp:
            records = SQLiteRecordStore(Path(tmp) / "bench.db")
            try:
                say(f"embedded graph, {size:,} memories")
                embedded, reference = _measure(
                    "embedded", EmbeddedGraphStore(records), user_id, items, queries, config
                )
            finally:
                records.close()
        results.append(embedded)
        if neo4j_uri is None:
            continue
        from dreammem.stores.neo4j import Neo4jGraphStore  # noqa: PLC0415 - the neo4j extra is optional

        graph = Neo4jGraphStore(neo4j_uri)
        try:
            say(f"Neo4j graph, {size:,} memories")
            remote, answers = _measure("neo4j", graph, user_id, items, queries, config)
            remote.agreement = round(
                sum(a == b for a, b in zip(answers, reference, strict=True)) / len(answers), 4
            )
            results.append(remote)
        finally:
            graph.clear(user_id)
            graph.close()
    return results
