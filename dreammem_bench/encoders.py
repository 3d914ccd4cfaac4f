"""The packaged MiniLM on each runtime (numpy, torch), short and long texts side by side.

Short texts are the throughput bench's chat turns (~15 tokens). Long ones stand for an
assistant's answers in a long conversation (LongMemEval's haystacks average ~900
characters a turn, some past the model's 256-token cut): deterministic paragraphs of
3 to 28 of those sentences. The runtimes take turns chunk by chunk, which one goes first
alternating, so a change of load on a shared machine falls on both alike; each is timed
in wall-clock and process CPU seconds (all its threads).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rich.table import Table

from dreammem.embed.base import Embedder
from dreammem.embed.models import resolve_embedder
from dreammem.errors import ConfigError
from dreammem_bench.throughput import Stopwatch, synthetic_turns

__all__ = [
    "CHUNK",
    "EncoderResult",
    "compare_encoders",
    "encoder_table",
    "long_texts",
    "ratio_line",
    "runtime_embedders",
    "runtime_sets",
]

CHUNK = 128
"""Texts per ``embed_documents`` call; the runtimes alternate between calls."""


@dataclass(frozen=True, slots=True)
class EncoderResult:
    """One runtime on one set of texts."""

    runtime: str
    texts: str
    count: int
    wall_s: float
    cpu_s: float

    @property
    def per_s(self) -> float:
        """Texts per wall-clock second."""
        return self.count / self.wall_s

    @property
    def per_cpu_s(self) -> float:
        """Texts per CPU-second of the process."""
        return self.count / self.cpu_s

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "texts": self.count,
            "wall_s": round(self.wall_s, 2),
            "cpu_s": round(self.cpu_s, 2),
            "per_s": round(self.per_s, 1),
            "per_cpu_s": round(self.per_cpu_s, 1),
        }


def long_texts(count: int, *, seed: int = 13) -> list[str]:
    """``count`` deterministic paragraphs of 3 to 28 chat sentences (about 900 characters on average)."""
    rng = random.Random(seed)
    sentences = synthetic_turns(40 * count, seed=seed)
    return [" ".join(rng.sample(sentences, rng.randint(3, 28))) for _ in range(count)]


def compare_encoders(
    embedders: Mapping[str, Embedder],
    text_sets: Mapping[str, Sequence[str]],
    *,
    on_step: Callable[[str], None] | None = None,
) -> list[EncoderResult]:
    """Encode every set with every embedder, chunk by chunk in turns.

    Returns:
        One result per (set, embedder), sets in order, embedders in order within a set.
    """
    step = on_step or (lambda _name: None)
    results = []
    for set_name, texts in text_sets.items():
        clocks = {name: Stopwatch() for name in embedders}
        for number, lo in enumerate(range(0, len(texts), CHUNK)):
            names = list(embedders) if number % 2 == 0 else list(embedders)[::-1]
            for name in names:
                clocks[name].time(functools.partial(embedders[name].embed_documents, texts[lo : lo + CHUNK]))
                step(f"{name} {set_name}")
        for name, clock in clocks.items():
            results.append(EncoderResult(name, set_name, len(texts), clock.wall_s, clock.cpu_s))
    return results


def runtime_embedders(
    runtimes: Sequence[str], *, batch_size: int
) -> tuple[dict[str, Embedder], dict[str, str]]:
    """The packaged MiniLM on each named runtime; those that cannot load, with the reason."""
    loaded: dict[str, Embedder] = {}
    missing: dict[str, str] = {}
    for runtime in runtimes:
        try:
            loaded[runtime] = resolve_embedder("minilm", batch_size=batch_size, runtime=runtime)
        except ConfigError as exc:
            missing[runtime] = str(exc)
    return loaded, missing


def runtime_sets(count: int) -> dict[str, list[str]]:
    """``count`` short chat turns and ``count // 4`` long paragraphs (a long one costs ~10x a short one)."""
    return {"short": synthetic_turns(count, seed=17), "long": long_texts(max(1, count // 4))}


def encoder_table(results: Sequence[EncoderResult]) -> Table:
    """One row per runtime, texts per second and per CPU-second for each set of texts."""
    sets = list(dict.fromkeys(r.texts for r in results))
    counts = {r.texts: r.count for r in results}
    table = Table(
        title="The packaged MiniLM per runtime, " + ", ".join(f"{counts[s]} {s} texts" for s in sets)
    )
    table.add_column("runtime", justify="left")
    for name in sets:
        table.add_column(f"{name} texts/s", justify="right")
        table.add_column(f"{name} texts/CPU-s", justify="right")
    for runtime in dict.fromkeys(r.runtime for r in results):
        row = {r.texts: r for r in results if r.runtime == runtime}
        table.add_row(runtime, *(f"{v:.1f}" for s in sets for v in (row[s].per_s, row[s].per_cpu_s)))
    return table


def ratio_line(results: Sequence[EncoderResult], ours: str = "numpy", theirs: str = "torch") -> str:
    """``ours`` against ``theirs`` per set, wall clock and CPU ('' unless both ran)."""
    by = {(r.runtime, r.texts): r for r in results}
    parts = [
        f"{name} {by[ours, name].per_s / by[theirs, name].per_s:.2f}x wall clock, "
        f"{by[ours, name].per_cpu_s / by[theirs, name].per_cpu_s:.2f}x CPU"
        for name in dict.fromkeys(r.texts for r in results)
        if (ours, name) in by and (theirs, name) in by
    ]
    return f"{ours} / {theirs}: " + "; ".join(parts) if parts else ""
