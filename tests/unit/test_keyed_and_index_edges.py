"""Keyed entries that recall never ranks, and the vector index contract's shared methods."""

from __future__ import annotations

import asyncio

import numpy as np

from dreammem import DreamMemory
from dreammem.keyed import list_keyed, put_keyed, rank_keyed
from dreammem.stores.faiss_index import FaissVectorIndex


def test_entries_kept_out_of_scoring_keep_their_order_with_no_score(memory: DreamMemory) -> None:
    for key in ("b", "a", "c"):
        put_keyed(
            memory,
            user_id="u1",
            path=("u1", "notes"),
            key=key,
            value={"k": key},
            text=f"note {key}",
            indexed=False,
        )
    entries = list_keyed(memory, user_id="u1")
    ranked = rank_keyed(memory, "note a", user_id="u1", entries=entries)
    assert [e.key for e, _ in ranked] == [e.key for e in entries]
    assert all(score is None for _, score in ranked)
    assert rank_keyed(memory, "note a", user_id="u1", entries=[]) == []


def test_an_indexed_entry_ranks_ahead_of_unindexed_ones(memory: DreamMemory) -> None:
    put_keyed(memory, user_id="u1", path=("u1",), key="plain", value={}, text="green tea", indexed=False)
    put_keyed(memory, user_id="u1", path=("u1",), key="scored", value={}, text="green tea in the morning")
    ranked = rank_keyed(memory, "green tea", user_id="u1", entries=list_keyed(memory, user_id="u1"))
    assert [(e.key, s is None) for e, s in ranked] == [("scored", False), ("plain", True)]


def test_subset_and_async_searches_agree_with_search() -> None:
    index = FaissVectorIndex(4, None)
    vectors = np.eye(4, dtype=np.float32)
    index.add("u1", [10, 11, 12, 13], vectors)
    index.add("u2", [20], vectors[:1])
    query = np.array([0.9, 0.1, 0.0, 0.0], dtype=np.float32)
    full = index.search("u1", query, 4)
    assert [i for i, _ in full][:2] == [10, 11]
    assert asyncio.run(index.asearch("u1", query, 4)) == full
    subset = index.search_subset("u1", query, [11, 12, 20], 5)
    assert [i for i, _ in subset] == [11, 12]  # 20 is another user's row: never returned
    index.close()  # no file: closing flushes nothing and keeps the vectors
    assert index.count() == 5
