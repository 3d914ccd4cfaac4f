"""The side-by-side backends bench: same work for every store, growth by size, the issue-37 targets."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.memory import Turn
from dreammem.types import MemoryRecord
from dreammem_bench.backends import (
    EMBEDDED,
    NEO4J,
    Side,
    SizeResult,
    check_targets,
    embedder_named,
    grow,
    project_ingest,
    run_sizes,
)
from dreammem_bench.latency import synthetic_turns


class LoggedMemory(DreamMemory):
    """A real store that notes which side wrote each batch, in order."""

    def __init__(self, path: Path, log: list[str], name: str) -> None:
        super().__init__(path, embedder=HashingEmbedder(dim=384))
        self._log, self._name = log, name

    def add_many(self, turns: Iterable[Turn]) -> list[MemoryRecord]:
        self._log.append(self._name)
        return super().add_many(turns)


@pytest.fixture
def two(tmp_path: Path) -> Iterator[tuple[list[Side], list[str]]]:
    log: list[str] = []
    with LoggedMemory(tmp_path / "a", log, "a") as a, LoggedMemory(tmp_path / "b", log, "b") as b:
        yield [Side("a", a), Side("b", b)], log


def test_grow_writes_the_same_batches_to_every_side_alternating_first(
    two: tuple[list[Side], list[str]],
) -> None:
    sides, log = two
    turns = synthetic_turns(50, 1)
    rates = grow(sides, turns, 30, batch=10)
    assert log == ["a", "b", "b", "a", "a", "b"]
    rates = grow(sides, turns, 20, batch=10, first=3)  # the order goes on alternating across calls
    assert log[6:] == ["b", "a", "a", "b"]
    assert set(rates) == {"a", "b"} and min(rates.values()) > 0
    assert [s.memory.store.count("user-000") for s in sides] == [50, 50]
    assert grow(sides, turns, 10, batch=10) == {}  # nothing left to write


def test_run_sizes_grows_every_user_to_each_size_and_measures_both(
    two: tuple[list[Side], list[str]],
) -> None:
    sides, _ = two
    seen: list[SizeResult] = []
    results = run_sizes(sides, [10, 30], users=3, queries=6, k=5, batch=8, prefix="t-", on_size=seen.append)
    assert seen == results and [r.records_per_user for r in results] == [10, 30]
    for side in sides:
        assert side.memory.store.count() == 90
        assert {side.memory.store.count(f"t-user-{n:03d}") for n in range(3)} == {30}
    last = results[-1]
    assert set(last.recall_ms) == {"a", "b"} and set(last.ingest_per_s) == {"a", "b"}
    assert all(0 < v["p50"] <= v["p95"] for v in last.recall_ms.values())
    assert "vector" in last.stages_p50_ms["a"] and "total" in last.stages_p50_ms["b"]
    assert 0 < last.active["a"] == last.active["b"] <= 90
    ratio = last.ratio(over="a", side="b")
    assert set(ratio) == {"p50", "p95", "ingest"}
    assert ratio["p50"] == pytest.approx(last.recall_ms["b"]["p50"] / last.recall_ms["a"]["p50"])
    assert last.ratio() == {}  # no embedded / neo4j pair here
    assert last.to_dict()["records"] == 90 and len(last.to_dict()["load_avg"]["before"]) == 3


def test_run_sizes_refuses_falling_sizes_and_users_with_records(two: tuple[list[Side], list[str]]) -> None:
    sides, _ = two
    with pytest.raises(ValueError, match="rise"):
        run_sizes(sides, [30, 10])
    sides[1].memory.add("an earlier record", user_id="user-000")
    with pytest.raises(ValueError, match="b store already holds"):
        run_sizes(sides, [10])


def _size(
    users: int, per_user: int, embedded: float, neo4j: float, ingest: tuple[float, float]
) -> SizeResult:
    result = SizeResult(per_user, users, (0.0, 0.0, 0.0))
    result.recall_ms = {
        EMBEDDED: {"p50": embedded, "p95": 2 * embedded},
        NEO4J: {"p50": neo4j, "p95": 2 * neo4j},
    }
    result.ingest_per_s = {EMBEDDED: ingest[0], NEO4J: ingest[1]}
    return result


def test_check_targets_reports_only_the_sizes_the_run_reached() -> None:
    one_user = [
        _size(1, 1_000, 5.0, 40.0, (800, 500)),
        _size(1, 10_000, 6.0, 12.0, (800, 300)),
        _size(1, 100_000, 9.0, 70.0, (700, 100)),
    ]
    got = check_targets(one_user)
    assert set(got) == {
        "recall_p50_at_10k_one_user",
        "recall_p95_at_10k_one_user",
        "growth_1k_to_100k",
        "ingest",
    }
    assert got["recall_p50_at_10k_one_user"] == {
        **got["recall_p50_at_10k_one_user"],
        "value": 2.0,
        "met": True,
    }
    assert got["recall_p95_at_10k_one_user"]["met"] is True
    assert got["growth_1k_to_100k"]["value"] == 1.75 and got["growth_1k_to_100k"]["met"] is False
    assert got["ingest"]["value"] == pytest.approx(100 / 700, abs=1e-3) and got["ingest"]["met"] is False
    many = check_targets([_size(1000, 1_000, 10.0, 31.0, (800, 400))])
    assert many["recall_p50_at_1000x1000"]["met"] is False and many["recall_p95_at_1000x1000"]["met"] is False
    assert many["ingest"]["met"] is True
    assert check_targets([_size(100, 1_000, 10.0, 11.0, (1, 1))]) == {
        "ingest": many["ingest"] | {"value": 1.0}
    }


def test_the_default_vectors_are_cheap_hashing_at_minilm_width() -> None:
    embedder = embedder_named("hashing")
    assert (embedder.name, embedder.dim) == ("hashing-384", 384)


def test_project_ingest_uses_the_last_sizes_rates() -> None:
    results = [_size(1, 1_000, 5.0, 9.0, (800, 500)), _size(1, 10_000, 6.0, 9.0, (200, 40))]
    assert project_ingest(results, 1_000_000) == pytest.approx(
        {EMBEDDED: 1e6 / 200 / 3600, NEO4J: 1e6 / 40 / 3600}
    )
    assert project_ingest([], 10) == {}


def _backends_script() -> Any:
    spec = importlib.util.spec_from_file_location(
        "backends_script", Path(__file__).resolve().parents[2] / "benchmarks" / "backends.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_script_starts_the_neo4j_version_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    script = _backends_script()
    monkeypatch.setenv("NEO4J_VERSION", "2025.01.0")  # a caller's stray setting never picks the server
    args = script.build_parser().parse_args(["--neo4j-version", "2026.08.1", "--state", "S"])
    assert args.neo4j_version == "2026.08.1"
    env = script.server_env(args.state, args.neo4j_version)
    assert (env["NEO4J_VERSION"], env["NEO4J_STATE_DIR"], env["NEO4J_PORT"]) == ("2026.08.1", "S", "auto")
    default = script.build_parser().parse_args([])
    assert default.neo4j_version is None
    assert "NEO4J_VERSION" not in script.server_env(default.state, default.neo4j_version)
