"""Input bounds of the calls whose cost grows with their input: paths deduplicated, batches capped.

``recall(paths=[...] * 5000)`` ran the same path 5,000 times (11 s); ``add_many`` took
any number of turns and bytes in one transaction (20,000 turns 17 s, 10 MB 21 s).
Now repeated paths run once, and a batch over ``write.max_batch_turns`` turns or
``write.max_batch_chars`` characters is a typed error that writes nothing and reads
no further than the bound.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemConfig, DreamMemory, ValidationError
from dreammem.config import DreamConfig, WriteConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.pipeline import RecallPipeline

DOC = Path(__file__).resolve().parents[2] / "docs" / "RELIABILITY.md"


def test_repeated_paths_run_once(memory: DreamMemory, monkeypatch: pytest.MonkeyPatch) -> None:
    memory.add("the museum opens at nine on Sundays", user_id="u1")
    asked: list[list[str] | None] = []
    real = RecallPipeline.run

    def spy(self: RecallPipeline, query: Any, k: int, *, paths: Any = None) -> Any:
        asked.append(None if paths is None else list(paths))
        return real(self, query, k, paths=paths)

    monkeypatch.setattr(RecallPipeline, "run", spy)
    started = time.perf_counter()
    result = memory.recall("museum", user_id="u1", paths=["keyword", "vector"] * 2_500)
    assert time.perf_counter() - started < 20  # was 11 s on an idle machine, once per name
    assert asked == [["keyword", "vector"]]
    assert result.hits and result.hits[0].record.content.startswith("the museum")


def test_the_batch_bounds_are_documented_config() -> None:
    write = DreamMemConfig().write
    assert (write.max_batch_turns, write.max_batch_chars) == (10_000, 5_000_000)
    text = DOC.read_text(encoding="utf-8")
    assert "write.max_batch_turns" in text and "write.max_batch_chars" in text


def _store(tmp_path: Path, **bounds: int) -> DreamMemory:
    config = DreamMemConfig(write=WriteConfig(**bounds))
    return DreamMemory(tmp_path / "s", config=config, embedder=HashingEmbedder())


def _turns(count: int, read: list[int], size: int = 20) -> Iterator[dict[str, Any]]:
    for n in range(count):
        read.append(n)
        yield {"content": f"turn {n} ".ljust(size, "x"), "user_id": "u1"}


def test_a_batch_over_the_turn_bound_is_refused_whole(tmp_path: Path) -> None:
    with _store(tmp_path, max_batch_turns=50) as memory:
        assert len(memory.add_many(_turns(50, []))) == 50  # at the bound: fine
        read: list[int] = []
        with pytest.raises(ValidationError, match=r"write\.max_batch_turns"):
            memory.add_many(_turns(1_000_000, read))
        assert len(read) == 51  # stopped at the first turn over the bound
        assert memory.store.count() == 50  # nothing of the refused batch


def test_a_batch_over_the_character_bound_is_refused_whole(tmp_path: Path) -> None:
    with _store(tmp_path, max_batch_chars=1_000) as memory:
        assert len(memory.add_many(_turns(10, [], size=100))) == 10  # exactly 1,000 characters
        read: list[int] = []
        with pytest.raises(ValidationError, match=r"write\.max_batch_chars"):
            memory.add_many(_turns(1_000, read, size=100))
        assert len(read) == 11
        assert memory.store.count() == 10


@pytest.mark.parametrize("field", ["max_batch_turns", "max_batch_chars"])
def test_a_bound_below_one_is_a_config_error(field: str) -> None:
    assert getattr(WriteConfig(**{field: 1}), field) == 1
    with pytest.raises(ValueError, match=field):
        WriteConfig(**{field: 0})


def test_a_dream_consumes_at_most_max_records_oldest_first(tmp_path: Path) -> None:
    config = DreamMemConfig(dream=DreamConfig(max_records=5))
    with DreamMemory(tmp_path / "s", config=config, embedder=HashingEmbedder()) as memory:
        turns = memory.add_many(
            {"content": f"turn {n}: the museum visit number {n}", "user_id": "u1"} for n in range(12)
        )
        first = memory.dream(user_id="u1")
        assert (first.queued, first.left_queued) == (5, 7)
        assert memory.store.queue_size("u1") == 7
        waiting = {r.id for r in memory.store.queued("u1")}
        assert waiting == {t.id for t in turns[5:]}  # the oldest five went first
        assert [memory.dream(user_id="u1").left_queued for _ in range(2)] == [2, 0]
        assert memory.store.queue_size("u1") == 0
    text = DOC.read_text(encoding="utf-8")
    assert "dream.max_records" in text
