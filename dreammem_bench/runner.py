"""Running benchmark methods over conversations in one process, timing each step.

For each conversation, each method ingests it (timed) and then answers every
question (each query timed). Methods run one after another on the same data, so
their numbers are comparable within one run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import BenchMethod
from dreammem_bench.metrics import QuestionOutcome

__all__ = ["MethodRun", "merge_runs", "run_benchmark", "total_steps"]


@dataclass(slots=True)
class MethodRun:
    """Everything one method produced in a run.

    Attributes:
        name: The method name.
        outcomes: One per scored question.
        latencies_ms: One per query.
        ingest_turns: Turns ingested.
        ingest_seconds: Time spent ingesting them.
        shares_index_with: The method whose index (and ingest) it reused, if any.
    """

    name: str
    outcomes: list[QuestionOutcome] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    ingest_turns: int = 0
    ingest_seconds: float = 0.0
    shares_index_with: str | None = None

    @property
    def ingest_per_s(self) -> float:
        """Turns ingested per second (0.0 when nothing was timed)."""
        return self.ingest_turns / self.ingest_seconds if self.ingest_seconds > 0 else 0.0


def total_steps(conversations: Sequence[LocomoConversation], methods: Sequence[BenchMethod]) -> int:
    """How many progress steps a run takes: one per ingest and one per query."""
    return sum(len(methods) * (1 + len(c.questions)) for c in conversations)


def run_benchmark(
    conversations: Sequence[LocomoConversation],
    methods: Sequence[BenchMethod],
    *,
    k: int = 10,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, MethodRun]:
    """Run every method on every conversation.

    Args:
        conversations: The data.
        methods: The methods, a base method before any variant sharing its index.
        k: How many memories each query retrieves.
        on_step: Called after each ingest and each query with the method name.

    Returns:
        The run of each method, by name.
    """
    runs = {m.name: MethodRun(m.name, shares_index_with=m.shares_index_with) for m in methods}
    for conversation in conversations:
        for method in methods:
            run = runs[method.name]
            start = time.perf_counter()
            method.index(conversation)
            if method.shares_index_with is None:
                run.ingest_seconds += time.perf_counter() - start
                run.ingest_turns += len(conversation.turns)
            if on_step is not None:
                on_step(method.name)
            for question in conversation.questions:
                start = time.perf_counter()
                retrieved = method.search(conversation, question.question, k)
                run.latencies_ms.append((time.perf_counter() - start) * 1000)
                run.outcomes.append(
                    QuestionOutcome(question.category, frozenset(question.evidence), tuple(retrieved))
                )
                if on_step is not None:
                    on_step(method.name)
    return runs


def merge_runs(into: dict[str, MethodRun], more: dict[str, MethodRun]) -> dict[str, MethodRun]:
    """Add the outcomes, latencies and ingest of ``more`` to ``into`` (e.g. across folds)."""
    for name, run in more.items():
        target = into.setdefault(name, MethodRun(name, shares_index_with=run.shares_index_with))
        target.outcomes.extend(run.outcomes)
        target.latencies_ms.extend(run.latencies_ms)
        target.ingest_turns += run.ingest_turns
        target.ingest_seconds += run.ingest_seconds
    return into
