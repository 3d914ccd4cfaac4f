"""FAISS files that look whole but must not be trusted, and the index's own bookkeeping.

Each bad file is written the way the index writes its own (``np.savez`` of the same
arrays), with one thing wrong in it; loading must refuse it, so the store rebuilds
from SQLite instead of serving it.
"""

from __future__ import annotations

from pathlib import Path

import faiss
import numpy as np
import numpy.typing as npt

from dreammem.stores.faiss_index import FaissVectorIndex

DIM = 8


def _unit(n: int, seed: int) -> npt.NDArray[np.float32]:
    vectors = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _written(path: Path) -> dict[str, np.ndarray]:  # type: ignore[type-arg]
    index = FaissVectorIndex(DIM, path)
    index.add("u1", [1, 2, 3], _unit(3, 1))
    index.add("u2", [4, 5], _unit(2, 2))
    index.sequence = 7
    index.flush()
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files}


def _rewrite(path: Path, **arrays: np.ndarray) -> None:  # type: ignore[type-arg]
    with path.open("wb") as handle:
        np.savez(handle, **arrays)


def test_a_good_file_loads_with_its_sequence_and_owners(tmp_path: Path) -> None:
    _written(tmp_path / "v.faiss")
    index = FaissVectorIndex(DIM, tmp_path / "v.faiss")
    assert index.load_file()
    assert (index.sequence, index.counts()) == (7, {"u1": 3, "u2": 2})
    index.remove([2, 4, 99])  # unknown ids are ignored
    assert index.counts() == {"u1": 2, "u2": 1}


def test_a_shard_of_another_index_type_is_refused(tmp_path: Path) -> None:
    arrays = _written(tmp_path / "v.faiss")
    foreign = faiss.IndexFlatL2(DIM)
    foreign.add(_unit(3, 3))
    arrays["shard0"] = faiss.serialize_index(foreign)
    _rewrite(tmp_path / "v.faiss", **arrays)
    assert not FaissVectorIndex(DIM, tmp_path / "v.faiss").load_file()


def test_a_row_id_in_two_shards_is_refused(tmp_path: Path) -> None:
    arrays = _written(tmp_path / "v.faiss")
    arrays["shard1"] = arrays["shard0"]  # u2's shard now holds u1's row ids too
    _rewrite(tmp_path / "v.faiss", **arrays)
    assert not FaissVectorIndex(DIM, tmp_path / "v.faiss").load_file()


def test_a_file_of_another_dimension_or_format_is_refused(tmp_path: Path) -> None:
    arrays = _written(tmp_path / "v.faiss")
    assert not FaissVectorIndex(DIM * 2, tmp_path / "v.faiss").load_file()
    _rewrite(tmp_path / "v.faiss", **{**arrays, "format": np.array(2)})
    assert not FaissVectorIndex(DIM, tmp_path / "v.faiss").load_file()


def test_a_file_missing_an_array_is_refused(tmp_path: Path) -> None:
    arrays = _written(tmp_path / "v.faiss")
    del arrays["trained"]
    _rewrite(tmp_path / "v.faiss", **arrays)
    assert not FaissVectorIndex(DIM, tmp_path / "v.faiss").load_file()


def test_adding_a_row_to_another_user_moves_it(tmp_path: Path) -> None:
    index = FaissVectorIndex(DIM, None)
    vectors = _unit(2, 4)
    index.add("u1", [1, 2], vectors)
    index.add("u2", [2], vectors[1:])  # row 2 now belongs to u2
    assert index.counts() == {"u1": 1, "u2": 1}
    assert [i for i, _ in index.search("u1", vectors[1], 5)] == [1]
    assert [i for i, _ in index.search("u2", vectors[1], 5)] == [2]
    index.add("u1", [], np.zeros((0, DIM), dtype=np.float32))
    assert index.count() == 2


def test_an_index_without_a_path_never_writes(tmp_path: Path) -> None:
    index = FaissVectorIndex(DIM, None)
    index.add("u1", [1], _unit(1, 5))
    index.flush()
    assert not index.load_file()
    assert list(tmp_path.iterdir()) == []


def test_a_clean_index_does_not_rewrite_its_file(tmp_path: Path) -> None:
    _written(tmp_path / "v.faiss")
    before = (tmp_path / "v.faiss").stat().st_ino
    index = FaissVectorIndex(DIM, tmp_path / "v.faiss")
    assert index.load_file()
    index.remove([99])  # nothing held: not a change
    index.flush()
    assert (tmp_path / "v.faiss").stat().st_ino == before
    index.remove([1])
    index.flush()
    assert (tmp_path / "v.faiss").stat().st_ino != before


def test_a_shard_cut_short_or_of_another_dtype_is_refused(tmp_path: Path) -> None:
    """Shards are streamed from the file into FAISS: a short or foreign member must fail cleanly."""
    arrays = _written(tmp_path / "v.faiss")
    for bad in (arrays["shard0"][: len(arrays["shard0"]) // 2], arrays["shard0"].astype(np.int32)):
        _rewrite(tmp_path / "v.faiss", **{**arrays, "shard0": bad})
        assert not FaissVectorIndex(DIM, tmp_path / "v.faiss").load_file()


def test_a_shard_whose_bytes_changed_on_disk_is_refused(tmp_path: Path) -> None:
    """The archive's checksum catches bytes flipped inside a shard after it was written."""
    _written(tmp_path / "v.faiss")
    raw = bytearray((tmp_path / "v.faiss").read_bytes())
    at = raw.index(b"shard0.npy") + 200  # inside the first shard's data
    raw[at] ^= 0xFF
    (tmp_path / "v.faiss").write_bytes(bytes(raw))
    assert not FaissVectorIndex(DIM, tmp_path / "v.faiss").load_file()


def test_a_streamed_file_searches_like_the_index_that_wrote_it(tmp_path: Path) -> None:
    written = FaissVectorIndex(DIM, tmp_path / "v.faiss")
    vectors = _unit(40, 4)
    written.add("u1", range(100, 140), vectors)
    written.flush()
    loaded = FaissVectorIndex(DIM, tmp_path / "v.faiss")
    assert loaded.load_file()
    for query in _unit(5, 5):
        assert loaded.search("u1", query, 7) == written.search("u1", query, 7)
