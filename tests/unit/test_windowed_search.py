"""Time-windowed BM25, window row ids and subset vector search on the real stores."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import numpy.typing as npt

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.base import VectorIndex
from dreammem.stores.faiss_index import FaissVectorIndex

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def _fill(memory: DreamMemory) -> dict[str, int]:
    records = memory.add_many(
        [
            {"content": f"tea note day {n}", "user_id": "u1", "event_time": T0 + timedelta(days=n)}
            for n in range(10)
        ]
        + [{"content": "tea note of another user", "user_id": "u2", "event_time": T0 + timedelta(days=3)}]
    )
    return {r.content: rowid for r, rowid in zip(records, _rowids(memory, records), strict=True)}


def _rowids(memory: DreamMemory, records: Sequence) -> list[int]:  # type: ignore[type-arg]
    out = []
    for r in records:
        out.append(memory.store.rowids(r.user_id, [r.id])[r.id])
    return out


def test_window_rowids_are_scoped_ordered_and_half_open(memory: DreamMemory) -> None:
    ids = _fill(memory)
    since, until = T0 + timedelta(days=2), T0 + timedelta(days=5)
    newest = memory.store.window_rowids("u1", since=since, until=until, limit=10)
    assert newest == [ids[f"tea note day {n}"] for n in (4, 3, 2)]
    oldest = memory.store.window_rowids("u1", since=since, until=until, limit=2, newest_first=False)
    assert oldest == [ids["tea note day 2"], ids["tea note day 3"]]
    assert len(memory.store.window_rowids("u1", limit=100)) == 10
    # a bound in another timezone means the same instant
    plus8 = timezone(timedelta(hours=8))
    assert memory.store.window_rowids("u1", since=since.astimezone(plus8), until=until, limit=10) == newest


def test_keyword_search_inside_a_window(memory: DreamMemory) -> None:
    ids = _fill(memory)
    found = memory.store.keyword_search("u1", ["tea"], 20, since=T0 + timedelta(days=8))
    assert {r for r, _ in found} == {ids["tea note day 8"], ids["tea note day 9"]}
    assert len(memory.store.keyword_search("u1", ["tea"], 20)) == 10
    assert memory.store.keyword_search("u1", ["tea"], 20, until=T0) == []


def test_faiss_subset_search_stays_in_scope(memory: DreamMemory) -> None:
    ids = _fill(memory)
    index = memory.pipeline.paths["vector"]._index  # type: ignore[attr-defined]  # noqa: SLF001 - white-box: the vector path's own index
    query = memory.embedder.embed_query("tea note day 7")
    wanted = [ids["tea note day 7"], ids["tea note day 1"], ids["tea note of another user"], 99_999]
    found = index.search_subset("u1", query, wanted, 10)
    assert [r for r, _ in found] == [ids["tea note day 7"], ids["tea note day 1"]]
    assert index.search_subset("u1", query, [], 10) == []
    assert index.search_subset("nobody", query, wanted, 10) == []


class _ScanIndex(VectorIndex):
    """A minimal backend without its own subset search: exercises the ABC default."""

    def __init__(self, dim: int) -> None:
        self._dim = dim
        self._rows: dict[int, tuple[str, npt.NDArray[np.float32]]] = {}

    @property
    def dim(self) -> int:
        return self._dim

    def add(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        for i, v in zip(ids, vectors, strict=True):
            self._rows[int(i)] = (user_id, v)

    def remove(self, ids: Sequence[int]) -> None:
        for i in ids:
            self._rows.pop(int(i), None)

    def search(self, user_id: str, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        scored = [(i, float(v @ query)) for i, (u, v) in self._rows.items() if u == user_id]
        return sorted(scored, key=lambda x: -x[1])[:k]

    def count(self, user_id: str | None = None) -> int:
        return sum(1 for u, _ in self._rows.values() if user_id is None or u == user_id)

    def reset(self) -> None:
        self._rows.clear()


def test_default_subset_search_matches_faiss() -> None:
    embedder = HashingEmbedder()
    texts = [f"memory about topic {n} and tea" for n in range(12)]
    vectors = embedder.embed_documents(texts)
    faiss_index, scan = FaissVectorIndex(embedder.dim), _ScanIndex(embedder.dim)
    for index in (faiss_index, scan):
        index.add("u1", list(range(12)), vectors)
        index.add("u2", [100], embedder.embed_documents(["other user tea"]))
    query = embedder.embed_query("topic 5 tea")
    subset = [1, 3, 5, 7, 100]
    expected = dict(faiss_index.search_subset("u1", query, subset, 10))
    got = dict(scan.search_subset("u1", query, subset, 10))
    assert set(got) == set(expected) == {1, 3, 5, 7}
    assert all(abs(got[i] - expected[i]) < 1e-5 for i in got)
    assert scan.search_subset("u1", query, subset, 1)[0][0] == 5


def test_single_user_store_searches_without_a_filter() -> None:
    embedder = HashingEmbedder()
    index = FaissVectorIndex(embedder.dim)
    index.add("only", [1, 2, 3], embedder.embed_documents(["a tea", "b coffee", "c tea tea"]))
    assert {i for i, _ in index.search("only", embedder.embed_query("tea"), 3)} == {1, 2, 3}
    index.add("second", [4], embedder.embed_documents(["d tea"]))
    assert 4 not in {i for i, _ in index.search("only", embedder.embed_query("tea"), 10)}


def test_keyword_search_falls_back_when_other_users_crowd_the_index(memory: DreamMemory) -> None:
    memory.add_many([{"content": f"tea tea tea crowd {n}", "user_id": "crowd"} for n in range(60)])
    mine = memory.add_many([{"content": f"tea note {n}", "user_id": "me"} for n in range(3)])
    rowids = set(_rowids(memory, mine))
    found = memory.store.keyword_search("me", ["tea"], 2)
    assert len(found) == 2 and {r for r, _ in found} <= rowids
    assert {r for r, _ in memory.store.keyword_search("me", ["tea"], 10)} == rowids
    crowd = memory.store.keyword_search("crowd", ["tea"], 5)
    assert len(crowd) == 5 and not {r for r, _ in crowd} & rowids


def test_hot_queries_use_their_indexes(memory: DreamMemory) -> None:
    """Pinned memories load through the partial index; candidate rows by rowid, not by user scan."""
    memory.add("hello", user_id="u1")
    store = memory.store
    pinned = store.fetchall(
        "EXPLAIN QUERY PLAN SELECT * FROM records WHERE user_id = ? AND status IN ('active') "
        "AND pinned = 1 ORDER BY event_time DESC, rowid DESC",
        ("u1",),
    )
    assert "records_user_pinned" in " ".join(str(tuple(r)) for r in pinned)
    by_rowid = store.fetchall(
        "EXPLAIN QUERY PLAN SELECT rowid AS rid, * FROM records WHERE +user_id = ? AND rowid IN (1, 2)",
        ("u1",),
    )
    assert "INTEGER PRIMARY KEY" in " ".join(str(tuple(r)) for r in by_rowid)
    replaced = store.fetchall(
        "EXPLAIN QUERY PLAN SELECT * FROM records WHERE user_id = ? AND +status = 'superseded' "
        "AND superseded_by IN ('a', 'b') ORDER BY event_time, rowid",
        ("u1",),
    )
    assert "records_user_superseded_by" in " ".join(str(tuple(r)) for r in replaced)
    assert store.schema_version >= 6
