"""Per-user FAISS shards: exact below the threshold, IVF above it, isolation, persistence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt
import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import VectorIndexConfig
from dreammem.embed import HashingEmbedder
from dreammem.stores.faiss_index import AnnSettings, FaissVectorIndex
from dreammem.stores.faiss_shard import FaissShard
from dreammem.stores.vector_base import VectorIndex

DIM = 32
SMALL = AnnSettings(threshold=400, nprobe=4, lists_per_sqrt=1.0)


def _clustered(n: int, seed: int, centers: int = 12) -> npt.NDArray[np.float32]:
    """Unit vectors around a few centres (embeddings cluster; uniform noise would not)."""
    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centers, DIM)).astype(np.float32)
    data = middle[rng.integers(0, centers, n)] + 0.3 * rng.standard_normal((n, DIM)).astype(np.float32)
    return (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)


def _exact(
    ids: npt.NDArray[np.int64], data: npt.NDArray[np.float32], q: npt.NDArray[np.float32], k: int
) -> list[int]:
    order = np.argsort(-(data @ q), kind="stable")[:k]
    return [int(ids[i]) for i in order]


def _filled(
    ann: AnnSettings = SMALL,
) -> tuple[FaissVectorIndex, npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    index = FaissVectorIndex(DIM, ann=ann)
    big, small = _clustered(1000, 1), _clustered(50, 2)
    index.add("big", list(range(1000)), big)
    index.add("small", list(range(5000, 5050)), small)
    return index, big, small


def test_a_user_past_the_threshold_is_approximate_and_a_small_one_stays_exact() -> None:
    index, _, small = _filled()
    assert index.is_approximate("big") and not index.is_approximate("small")
    assert index.count() == 1050 and index.count("big") == 1000 and index.count("small") == 50
    q = _clustered(1, 9)[0]
    ids = np.arange(5000, 5050, dtype=np.int64)
    assert [i for i, _ in index.search("small", q, 10)] == _exact(ids, small, q, 10)


def test_searches_never_cross_users() -> None:
    index, big, _ = _filled()
    for q in _clustered(20, 3):
        assert all(i < 1000 for i, _ in index.search("big", q, 30))
        assert all(5000 <= i < 5050 for i, _ in index.search("small", q, 30))
        # Asking for the other user's ids gives nothing back.
        assert index.search_subset("small", q, list(range(100)), 10) == []
        assert index.search_subset("big", q, list(range(5000, 5010)), 10) == []
    assert index.search("nobody", big[0], 5) == []


def test_ivf_recall_is_high_and_probing_every_list_is_exact() -> None:
    index, big, _ = _filled()
    ids = np.arange(1000, dtype=np.int64)
    queries = _clustered(30, 4)
    found = [{i for i, _ in index.search("big", q, 10)} for q in queries]
    truth = [set(_exact(ids, big, q, 10)) for q in queries]
    recall = np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)])
    assert recall >= 0.8
    index.ann = AnnSettings(threshold=SMALL.threshold, nprobe=10_000)
    for q, t in zip(queries, truth, strict=True):
        assert {i for i, _ in index.search("big", q, 10)} == t


def test_subset_search_inside_an_ivf_shard_is_exact() -> None:
    index, big, _ = _filled()
    allowed = np.arange(100, 400, 3, dtype=np.int64)
    for q in _clustered(10, 5):
        got = [i for i, _ in index.search_subset("big", q, allowed.tolist(), 7)]
        assert got == _exact(allowed, big[allowed], q, 7)


def test_removed_and_replaced_vectors_in_an_ivf_shard() -> None:
    index, big, _ = _filled()
    index.remove([0, 1, 2])
    assert index.count("big") == 997
    assert {0, 1, 2}.isdisjoint(i for i, _ in index.search_subset("big", big[0], list(range(10)), 10))
    index.add("big", [5], big[999:1000])  # a re-embedded row replaces its old vector
    assert index.count("big") == 997
    assert index.search_subset("big", big[999], [5, 999], 2)[0][1] == pytest.approx(1.0, abs=1e-5)
    index.remove([123_456])  # unknown ids are ignored
    assert index.count() == 1047


def test_shard_vectors_survive_training_and_regrowth() -> None:
    shard = FaissShard(DIM)
    data = _clustered(1700, 6)
    shard.add(np.arange(400, dtype=np.int64), data[:400], SMALL)
    assert shard.approximate and shard.trained_at == 400
    nlist = shard.index.nlist
    shard.add(np.arange(400, 1700, dtype=np.int64), data[400:], SMALL)  # grew fourfold: retrained
    assert shard.trained_at == 1700 and shard.index.nlist > nlist
    ids, vectors = shard.vectors()
    order = np.argsort(ids)
    assert np.array_equal(ids[order], np.arange(1700)) and np.allclose(vectors[order], data)


def test_threshold_zero_never_switches() -> None:
    index, _, _ = _filled(AnnSettings(threshold=0))
    assert not index.is_approximate("big")


def test_file_round_trip_keeps_shards_and_results(tmp_path: Path) -> None:
    path = tmp_path / "vectors.faiss"
    index, _, _ = _filled()
    index.path = path
    index.flush()
    loaded = FaissVectorIndex(DIM, path, ann=SMALL)
    assert loaded.load_file()
    assert loaded.is_approximate("big") and not loaded.is_approximate("small")
    for q in _clustered(5, 7):
        assert loaded.search("big", q, 10) == index.search("big", q, 10)
        assert loaded.search("small", q, 10) == index.search("small", q, 10)
    loaded.remove([5000])
    assert loaded.count("small") == 49


def test_older_or_broken_files_are_not_loaded(tmp_path: Path) -> None:
    path = tmp_path / "vectors.faiss"
    old = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))  # format 1: one index for every user
    faiss.write_index(old, str(path))
    assert not FaissVectorIndex(DIM, path).load_file()
    path.write_bytes(b"not a zip")
    assert not FaissVectorIndex(DIM, path).load_file()
    index, _, _ = _filled()
    index.path = path
    index.flush()
    assert not FaissVectorIndex(DIM + 1, path).load_file()


def test_memory_past_the_threshold_reopens_and_recalls(tmp_path: Path) -> None:
    config = DreamMemConfig(vector_index=VectorIndexConfig(ann_threshold=150, nprobe=4))
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    turns = [
        {
            "content": f"note {n} about topic {n % 17} and item {n % 5}",
            "user_id": "u1",
            "event_time": t0 + timedelta(hours=n),
        }
        for n in range(300)
    ] + [{"content": "note about topic 3 from another user", "user_id": "u2", "event_time": t0}]
    with DreamMemory(tmp_path / "s", config=config, embedder=HashingEmbedder()) as memory:
        memory.add_many(turns)
        index = memory.vector_index
        assert isinstance(index, FaissVectorIndex) and index.is_approximate("u1")
        first = [h.id for h in memory.recall("topic 3 item 3", user_id="u1", k=5).hits]
    with DreamMemory(tmp_path / "s", config=config, embedder=HashingEmbedder()) as memory:
        index = memory.vector_index
        assert isinstance(index, FaissVectorIndex) and index.is_approximate("u1")
        again = memory.recall("topic 3 item 3", user_id="u1", k=5)
        assert [h.id for h in again.hits] == first
        assert all(h.record.user_id == "u1" for h in again.hits)
        assert "vector" in again.hits[0].paths


def test_holds_tells_rows_kept_with_the_same_vector_from_changed_or_foreign_ones() -> None:
    index, big, small = _filled()
    ids = list(range(5000, 5003))
    assert index.holds("small", ids, small[:3]) == [True, True, True]
    changed = small[:3].copy()
    changed[1] = -changed[1]
    assert index.holds("small", ids, changed) == [True, False, True]
    assert index.holds("big", ids, small[:3]) == [False, False, False]  # another user's rows
    assert index.holds("small", [99_999], small[:1]) == [False]
    assert index.is_approximate("big")  # IVF shards do not look ids up: always "replace"
    assert index.holds("big", [0], big[:1]) == [False]


def _recall_and_probes(
    shard: FaissShard, data: npt.NDArray[np.float32], ann: AnnSettings
) -> tuple[float, float]:
    """Mean recall@10 against exact and lists probed per query, for queries off the data."""
    rng = np.random.default_rng(3)
    queries = rng.standard_normal((40, DIM)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    ids = np.arange(len(data), dtype=np.int64)
    faiss.cvar.indexIVF_stats.reset()
    found = [{i for i, _ in shard.search(q, 10, ann)} for q in queries]
    probed = faiss.cvar.indexIVF_stats.nlist / len(queries)
    truth = [set(_exact(ids, data, q, 10)) for q in queries]
    return float(np.mean([len(f & t) / 10 for f, t in zip(found, truth, strict=True)])), probed


def test_a_shard_that_retrains_into_more_lists_probes_the_same_share_and_keeps_its_recall() -> None:
    # Each retraining (at 4x growth) doubles the lists: a fixed nprobe probes half the share
    # it did, and recall falls with it (0.95 -> 0.87 -> 0.76 here with nprobe 4 alone).
    ann = AnnSettings(threshold=400, nprobe=4, lists_per_sqrt=1.0, probe_share=0.2)
    data = _clustered(6400, 1)
    shard = FaissShard(DIM)
    seen = []
    for size in (400, 1600, 6400):
        shard.add(np.arange(shard.ntotal, size, dtype=np.int64), data[shard.ntotal : size], ann)
        recall, probed = _recall_and_probes(shard, data[:size], ann)
        assert probed == ann.probes(shard.nlist) == max(4, int(np.ceil(0.2 * shard.nlist)))
        seen.append((shard.nlist, recall))
    assert [nlist for nlist, _ in seen] == [20, 40, 80]
    assert min(recall for _, recall in seen) >= seen[0][1] - 0.01 and seen[-1][1] >= 0.94
    fixed = AnnSettings(threshold=400, nprobe=4, lists_per_sqrt=1.0, probe_share=0.0)
    assert _recall_and_probes(shard, data, fixed) == (pytest.approx(0.76, abs=0.05), 4)


def test_probes_are_the_share_of_the_lists_at_least_nprobe_at_most_all() -> None:
    ann = AnnSettings(nprobe=32, probe_share=0.06)
    assert [ann.probes(n) for n in (8, 100, 565, 1131, 2262)] == [8, 32, 34, 68, 136]
    assert AnnSettings(nprobe=4, probe_share=0.0).probes(1131) == 4
    assert AnnSettings(nprobe=4, probe_share=1.0).probes(1131) == 1131


def test_the_store_config_sets_the_probed_share(tmp_path: Path) -> None:
    default = VectorIndexConfig()
    assert (default.nprobe, default.probe_share) == (AnnSettings().nprobe, AnnSettings().probe_share)
    config = DreamMemConfig(vector_index=VectorIndexConfig(ann_threshold=150, nprobe=2, probe_share=0.5))
    with DreamMemory(tmp_path / "s", config=config, embedder=HashingEmbedder()) as memory:
        memory.add_many({"content": f"note {n} on topic {n % 13}", "user_id": "u1"} for n in range(200))
        index = memory.vector_index
        assert isinstance(index, FaissVectorIndex) and index.is_approximate("u1")
        assert index.ann.probe_share == 0.5 and index.probes("u1") > 2
        assert index.probes("nobody") == 0


def test_a_batch_search_gives_each_row_what_its_own_search_gives() -> None:
    index, _, _ = _filled()
    queries = _clustered(40, 5)
    for user, k in (("big", 4), ("big", 25), ("small", 8), ("small", 80), ("nobody", 5)):
        assert index.search_many(user, queries, k) == [index.search(user, q, k) for q in queries]


def test_a_batch_search_cuts_between_equal_scores_by_row_id() -> None:
    index = FaissVectorIndex(DIM, ann=SMALL)
    copies = np.repeat(_clustered(1, 7), 8, axis=0)
    # Written highest row id first: FAISS keeps the first copies it stored, the tie rule the lowest ids.
    index.add("u", [900, 800, 700, 600, 500, 400], copies[:6])
    index.add("u", [300, 200], copies[6:])
    index.add("u", list(range(1000, 1040)), _clustered(40, 8))
    found = index.search_many("u", np.concatenate([copies[:1], _clustered(3, 9)]), 3)
    assert [i for i, _ in found[0]] == [200, 300, 400]
    assert found == [index.search("u", q, 3) for q in np.concatenate([copies[:1], _clustered(3, 9)])]


def test_a_batch_search_of_a_backend_without_one_searches_row_by_row() -> None:
    index, _, _ = _filled()
    queries = _clustered(5, 6)
    assert VectorIndex.search_many(index, "big", queries, 7) == [index.search("big", q, 7) for q in queries]
