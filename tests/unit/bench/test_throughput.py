"""The throughput benchmark runs end to end on a small store (hashing embedder)."""

from __future__ import annotations

from dreammem.embed import HashingEmbedder
from dreammem_bench.throughput import Stopwatch, run_throughput, synthetic_turns


def test_synthetic_turns_are_deterministic_and_varied() -> None:
    turns = synthetic_turns(300)
    assert turns == synthetic_turns(300)
    assert len(set(turns)) > 280
    assert synthetic_turns(300, seed=8) != turns


def test_run_throughput_reports_both_systems() -> None:
    steps: list[str] = []
    results = run_throughput(HashingEmbedder(), memories=120, queries=10, batch_size=50, on_step=steps.append)
    assert [r.name for r in results] == ["dreammem", "faiss+encoder"]
    for r in results:
        assert r.memories == 120
        assert r.ingest_per_s > 0 and r.ingest_per_cpu_s > 0
        assert 0 < r.p50_ms <= r.p95_ms
        assert set(r.to_dict()) == {"memories", "ingest_per_s", "ingest_per_cpu_s", "latency_ms"}
    assert steps.count("dreammem ingest") == 3 and steps.count("baseline ingest") == 3
    # The ingests take turns batch by batch, which one goes first alternating.
    base, ours = "baseline ingest", "dreammem ingest"
    assert steps[:6] == [base, ours, ours, base, base, ours]


def test_stopwatch_sums_wall_and_cpu_time() -> None:
    clock = Stopwatch()
    clock.time(lambda: sum(range(200_000)))
    first = (clock.wall_s, clock.cpu_s)
    clock.time(lambda: sum(range(200_000)))
    assert first[0] > 0 and first[1] > 0
    assert clock.wall_s > first[0] and clock.cpu_s >= first[1]
