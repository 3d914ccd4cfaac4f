"""A bounded load test of one shared store: N processes of mixed operations, then an audit.

Each worker process opens ``DreamMemory(uri)`` and runs ``ops`` operations drawn
with a fixed seed: ``add`` (40 %), ``add_many`` of three turns (15 %), ``recall``
(30 %), ``forget`` of one of its own earlier memories (10 %) and ``dream`` (5 %),
on two users of its own and one user shared by every worker. Every turn carries a
unique marker. A call that fails with a retryable error is retried (up to five
times, counted); what a call returned is *acknowledged*.

The audit then opens the store afresh and counts:

* **lost**: acknowledged turns missing from the store (any status);
* **duplicated**: markers held by more than one turn record;
* **cross-user**: recall hits (in any worker) of another user than the one asked;
* **not forgotten**: acknowledged forgets whose record is still active.

The embedder is the hashing one: this measures the store, not a model.
"""

from __future__ import annotations

import multiprocessing
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dreammem.embed import HashingEmbedder
from dreammem.errors import BackendError
from dreammem.memory import DreamMemory
from dreammem.types import Kind

__all__ = ["LoadReport", "WorkerLog", "audit", "run_load", "worker"]

SHARED = "shared"
_OPS = (("add", 40), ("add_many", 15), ("recall", 30), ("forget", 10), ("dream", 5))
_RETRIES = 5
_WORDS = "kayak fjord glacier tea passport violin lantern harbour orchard canyon".split()


@dataclass
class WorkerLog:
    """What one worker did and saw."""

    written: dict[str, str] = field(default_factory=dict)
    """marker -> user of every acknowledged turn."""
    forgotten: list[tuple[str, str]] = field(default_factory=list)
    """(record id, user) of every acknowledged forget."""
    cross_user: int = 0
    retries: int = 0
    failures: int = 0
    latencies: dict[str, list[float]] = field(default_factory=dict)


@dataclass(frozen=True)
class LoadReport:
    """The audit of a load run."""

    workers: int
    ops: int
    seconds: float
    acknowledged: int
    lost: int
    duplicated: int
    cross_user: int
    not_forgotten: int
    retries: int
    failures: int
    p50_ms: dict[str, float]
    p95_ms: dict[str, float]


def _retrying(log: WorkerLog, name: str, call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    for attempt in range(_RETRIES + 1):
        start = time.perf_counter()
        try:
            result = call(*args, **kwargs)
        except BackendError as exc:
            if not exc.is_retryable or attempt == _RETRIES:
                log.failures += 1
                return None
            log.retries += 1
            time.sleep(0.05 * (attempt + 1))
            continue
        log.latencies.setdefault(name, []).append((time.perf_counter() - start) * 1000)
        return result
    return None  # pragma: no cover - the loop always returns


def worker(uri: str, number: int, ops: int, seed: int) -> WorkerLog:
    """One worker process's operations (see the module docstring)."""
    rng = random.Random(seed * 1000 + number)
    users = [f"w{number}-a-{seed}", f"w{number}-b-{seed}", f"{SHARED}-{seed}"]
    log = WorkerLog()
    mine: list[tuple[str, str]] = []
    names, weights = [name for name, _ in _OPS], [weight for _, weight in _OPS]
    with DreamMemory(uri, embedder=HashingEmbedder()) as memory:
        for n in range(ops):
            op = rng.choices(names, weights)[0]
            user = rng.choice(users)
            marker = f"m{seed}x{number}x{n}"
            text = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} note {marker}"
            if op == "add":
                record = _retrying(log, op, memory.add, text, user_id=user)
                if record is not None:
                    log.written[marker] = user
                    mine.append((record.id, user))
            elif op == "add_many":
                turns = [{"content": f"{text} part{k}", "user_id": user} for k in range(3)]
                records = _retrying(log, op, memory.add_many, turns)
                for k, record in enumerate(records or []):
                    log.written[f"{marker} part{k}"] = user
                    mine.append((record.id, user))
            elif op == "recall":
                result = _retrying(log, op, memory.recall, rng.choice(_WORDS), user_id=user, k=5)
                if result is not None:
                    log.cross_user += sum(hit.record.user_id != user for hit in result.hits)
            elif op == "forget" and mine:
                record_id, owner = mine.pop(rng.randrange(len(mine)))
                if _retrying(log, op, memory.forget, record_id, user_id=owner) is not None:
                    log.forgotten.append((record_id, owner))
            elif op == "dream":
                _retrying(log, op, memory.dream, user_id=user)
    return log


def audit(uri: str, logs: list[WorkerLog], seconds: float, ops: int) -> LoadReport:
    """Count lost, duplicated, cross-user and not-forgotten (see the module docstring)."""
    written = {marker: user for log in logs for marker, user in log.written.items()}
    seen: dict[str, int] = {}
    with DreamMemory(uri, embedder=HashingEmbedder()) as memory:
        for user in sorted(set(written.values())):
            for record in memory.store.find(user, statuses=None, kinds=[Kind.TURN]):
                marker = record.content.split(" note ", 1)[-1]
                seen[marker] = seen.get(marker, 0) + 1
        forgotten = [(i, u) for log in logs for i, u in log.forgotten]
        still = sum(r.is_active for i, u in forgotten for r in memory.store.get(u, [i]))
    latencies: dict[str, list[float]] = {}
    for log in logs:
        for name, values in log.latencies.items():
            latencies.setdefault(name, []).extend(values)
    return LoadReport(
        workers=len(logs),
        ops=ops,
        seconds=round(seconds, 1),
        acknowledged=len(written),
        lost=sum(marker not in seen for marker in written),
        duplicated=sum(count > 1 for count in seen.values()),
        cross_user=sum(log.cross_user for log in logs),
        not_forgotten=still,
        retries=sum(log.retries for log in logs),
        failures=sum(log.failures for log in logs),
        p50_ms={k: round(statistics.median(v), 1) for k, v in sorted(latencies.items())},
        p95_ms={k: round(_p95(v), 1) for k, v in sorted(latencies.items())},
    )


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def run_load(uri: str, *, workers: int = 4, ops: int = 300, seed: int = 0) -> LoadReport:
    """Run ``workers`` processes of ``ops`` operations each on the store at ``uri``, then audit it."""
    context = multiprocessing.get_context("spawn")
    start = time.perf_counter()
    with context.Pool(workers) as pool:
        logs = pool.starmap(worker, [(uri, n, ops, seed) for n in range(workers)])
    return audit(uri, logs, time.perf_counter() - start, ops)
