"""One recall reads and decodes each record once (SearchMemo.records), with the store's records."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import SearchMemo
from dreammem.types import MemoryRecord

T0 = datetime(2024, 6, 1, 12, tzinfo=UTC)


class _Records:
    """A record source holding some rows, recording the row ids each read asks for."""

    def __init__(self, rows: dict[int, MemoryRecord]) -> None:
        self.rows = rows
        self.asked: list[list[int]] = []

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        self.asked.append(list(rowids))
        return {r: self.rows[r] for r in rowids if r in self.rows}


def test_each_row_is_read_once_and_a_missing_one_is_not_asked_again() -> None:
    rows = {n: MemoryRecord("u1", f"text {n}") for n in (1, 2, 3)}
    source = _Records(rows)
    memo = SearchMemo()
    assert memo.records(source, "u1", [2, 1, 9]) == {2: rows[2], 1: rows[1]}
    assert memo.records(source, "u1", [9, 3, 2, 3]) == {3: rows[3], 2: rows[2]}
    assert memo.records(source, "u1", [1, 9]) == {1: rows[1]}
    assert source.asked == [[2, 1, 9], [3]]  # 9 (another user's) is not asked again


def test_a_last_time_recall_decodes_each_record_once(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=DreamMemConfig()) as memory:
        for n in range(8):
            memory.add(
                f"Tom talked about the bike repair, part {n}.",
                user_id="u1",
                session_id=f"s{n}",
                event_time=T0 - timedelta(days=20 - n),
            )
        store = memory.store
        asked: list[int] = []

        def counted(user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
            asked.extend(rowids)
            return type(store).get_by_rowids(store, user_id, rowids)

        before = memory.recall("what did Tom say last time about the bike?", user_id="u1", k=3, now=T0)
        monkeypatch.setattr(store, "get_by_rowids", counted)
        hits = memory.recall("what did Tom say last time about the bike?", user_id="u1", k=3, now=T0).hits
    assert hits and [h.id for h in hits] == [h.id for h in before.hits]
    assert "temporal" in {p for h in hits for p in h.paths}
    assert asked and len(asked) == len(set(asked))
