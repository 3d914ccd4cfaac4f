"""The dream benchmark: does dreaming compress without losing or inventing anything.

``dreammem bench dream`` feeds deterministic synthetic streams
(:mod:`dreammem_bench.streams`, English and Chinese, ten batches of 200 turns) into a
fresh store with the real MiniLM embedder and dreams after every batch, once with
rules only and once with a scripted LLM (:class:`~dreammem_bench.scripted_llm.ScriptedDreamLLM`,
which also invents numbers and answers broken JSON now and then). A ``no_dream``
baseline stores the same turns and never dreams. No LLM judges anything:

* ``constraint_survival``: share of hard constraints still recalled verbatim (top 5)
  after the last dream (target 1.0);
* ``newest_wins``: share of changed preferences / corrected facts where the first
  recalled mention is the newest value, no active record states an old one, and the
  old one is kept as superseded (target 1.0);
* ``compression_ratio``: turns stored / active records after the last dream (8-12);
* ``invented_numbers``: distilled records carrying a number none of their sources has
  (target 0), checked by a plain digit scan independent of the guard;
* ``llm_calls_per_200``: LLM calls per 200-turn dream (<= 12);
* ``dream_seconds_200``: mean wall time of one 200-turn dream (rules: <= 1 s).
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreammem.config import DreamConfig, DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.embed.caching import CachingEmbedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem.memory import DreamMemory
from dreammem.types import Source, Status
from dreammem_bench.scripted_llm import ScriptedDreamLLM
from dreammem_bench.streams import Stream, make_stream

__all__ = ["METRIC_KEYS", "BenchResult", "ModeResult", "run_benchmark"]

METRIC_KEYS = (
    "constraint_survival",
    "newest_wins",
    "compression_ratio",
    "invented_numbers",
    "llm_calls_per_200",
    "dream_seconds_200",
)
MODES = ("rules", "scripted_llm", "no_dream")
_USER = "bench-user"
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*|[零〇一二两三四五六七八九十百千万亿]{2,}")
_K = 5


@dataclass(slots=True)
class ModeResult:
    """Metrics of one mode on one stream, plus what explains them."""

    language: str
    mode: str
    turns: int = 0
    active: int = 0
    constraints: int = 0
    survived: int = 0
    changes: int = 0
    won: int = 0
    invented: int = 0
    dream_seconds: list[float] = field(default_factory=list)
    dream_cpu_seconds: list[float] = field(default_factory=list)
    llm_calls: list[int] = field(default_factory=list)
    guard_kept: int = 0
    llm_rejected: int = 0
    failures: list[str] = field(default_factory=list)


@dataclass(slots=True)
class BenchResult:
    """Every mode on every stream."""

    results: list[ModeResult]
    seconds: float

    def metrics(self, mode: str, language: str | None = None) -> dict[str, float]:
        """The six metrics of a mode, over both languages or one."""
        rows = [r for r in self.results if r.mode == mode and (language is None or r.language == language)]
        seconds = [s for r in rows for s in r.dream_seconds]
        calls = [c for r in rows for c in r.llm_calls]
        return {
            "constraint_survival": _ratio(sum(r.survived for r in rows), sum(r.constraints for r in rows)),
            "newest_wins": _ratio(sum(r.won for r in rows), sum(r.changes for r in rows)),
            "compression_ratio": round(sum(r.turns for r in rows) / max(1, sum(r.active for r in rows)), 2),
            "invented_numbers": sum(r.invented for r in rows),
            "llm_calls_per_200": round(statistics.fmean(calls), 2) if calls else 0.0,
            "dream_seconds_200": round(statistics.fmean(seconds), 3) if seconds else 0.0,
        }

    def to_json(self) -> dict[str, dict[str, float]]:
        """``{"rules": M, "scripted_llm": M}`` with exactly the six metric keys each."""
        return {mode: self.metrics(mode) for mode in ("rules", "scripted_llm")}


def _ratio(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _config() -> DreamMemConfig:
    # Dreams are triggered by the benchmark itself, one per batch.
    return DreamMemConfig(dream=DreamConfig(queue_limit=10_000))


def run_mode(stream: Stream, mode: str, embedder: Embedder, workdir: Path) -> ModeResult:
    """Feed a stream into a fresh store, dreaming after each batch (unless ``no_dream``)."""
    llm = ScriptedDreamLLM(invent_every=3, malformed_every=7) if mode == "scripted_llm" else None
    result = ModeResult(stream.language, mode, turns=stream.turns)
    with DreamMemory(
        workdir / f"{stream.language}-{mode}", config=_config(), embedder=embedder, llm=llm
    ) as memory:
        for batch in stream.batches:
            memory.add_many(
                {
                    "content": t.content,
                    "role": t.role,
                    "user_id": _USER,
                    "session_id": t.session_id,
                    "event_time": t.event_time,
                }
                for t in batch
            )
            if mode == "no_dream":
                continue
            start, cpu = time.perf_counter(), time.process_time()
            report = memory.dream(user_id=_USER, now=batch[-1].event_time)
            result.dream_seconds.append(time.perf_counter() - start)
            result.dream_cpu_seconds.append(time.process_time() - cpu)
            result.llm_calls.append(int(report.llm.get("calls", 0)))
            result.guard_kept += len(report.guard_kept)
            result.llm_rejected += sum(1 for note in report.degraded if "invents" in note or "loses" in note)
            result.failures.extend(report.degraded)
        _measure(memory, stream, result)
    return result


def _measure(memory: DreamMemory, stream: Stream, result: ModeResult) -> None:
    active = memory.store.find(_USER)
    result.active = len(active)
    for constraint in stream.constraints:
        result.constraints += 1
        hits = memory.recall(constraint.query, user_id=_USER, k=_K)
        result.survived += any(constraint.text in h.record.content for h in hits)
    everything = memory.store.find(_USER, statuses=None)
    for change in stream.changes:
        result.changes += 1
        newest, old = change.values[-1], change.values[:-1]
        hits = memory.recall(change.query, user_id=_USER, k=_K)
        mentions = [h.record.content for h in hits if any(v in h.record.content for v in change.values)]
        first_is_newest = bool(mentions) and newest in mentions[0]
        stale = any(newest not in r.content and any(v in r.content for v in old) for r in active)
        kept = all(any(v in r.content and r.status is Status.SUPERSEDED for r in everything) for v in old)
        result.won += first_is_newest and not stale and kept
    for record in everything:
        if record.source is not Source.DISTILLED:
            continue
        sources = " ".join(s.content for s in memory.store.get(_USER, list(record.provenance)))
        result.invented += any(n not in sources for n in _NUMBER.findall(record.content))


def run_benchmark(
    *,
    seed: int = 0,
    batches: int = 10,
    per_batch: int = 200,
    languages: Sequence[str] = ("en", "zh"),
    modes: Sequence[str] = MODES,
    embedder: Embedder | None = None,
    workdir: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> BenchResult:
    """Run every mode on every language's stream.

    Args:
        seed: Stream seed.
        batches: Dreams per stream.
        per_batch: Turns per dream.
        languages: ``en`` and/or ``zh``.
        modes: Any of ``rules``, ``scripted_llm``, ``no_dream``.
        embedder: Default: the packaged all-MiniLM-L6-v2.
        workdir: Where the stores go (default: a temporary directory, removed after).
        progress: Called with a line per finished run.
    """
    if embedder is None:
        embedder = NumpyBertEmbedder()
    cached = CachingEmbedder(embedder)  # the modes embed the same turns
    start = time.perf_counter()
    results: list[ModeResult] = []
    with tempfile.TemporaryDirectory(prefix="dreammem-bench-") as tmp:
        base = workdir or Path(tmp)
        for language in languages:
            stream = make_stream(language, seed=seed, batches=batches, per_batch=per_batch)
            for mode in modes:
                results.append(run_mode(stream, mode, cached, base))
                if progress is not None:
                    progress(f"{language}/{mode} done")
    return BenchResult(results, time.perf_counter() - start)


def summary_rows(result: BenchResult) -> list[dict[str, Any]]:
    """One row per (mode, language) with the metrics and what explains them."""
    rows: list[dict[str, Any]] = []
    for r in result.results:
        rows.append(
            {
                "mode": r.mode,
                "language": r.language,
                **result.metrics(r.mode, r.language),
                "turns": r.turns,
                "active": r.active,
                "dream_cpu_seconds": round(statistics.fmean(r.dream_cpu_seconds), 3)
                if r.dream_cpu_seconds
                else 0.0,
                "guard_kept": r.guard_kept,
                "llm_rejected": r.llm_rejected,
            }
        )
    return rows
