"""The dream benchmark on the real MiniLM model, shortened (the full run is `dreammem bench dream`)."""

from __future__ import annotations

import pytest

from dreammem_bench.dream import run_benchmark

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_dream_targets_hold_with_minilm(minilm) -> None:  # type: ignore[no-untyped-def]
    result = run_benchmark(batches=5, per_batch=120, embedder=minilm)
    for mode, metrics in result.to_json().items():
        assert metrics["constraint_survival"] == 1.0, mode
        assert metrics["newest_wins"] == 1.0, mode
        assert metrics["invented_numbers"] == 0, mode
        assert metrics["llm_calls_per_200"] <= 12, mode
