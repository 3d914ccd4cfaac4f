"""The numpy MiniLM's batching: groups by token length, and batches side by side give the same vectors."""

from __future__ import annotations

import numpy as np

from dreammem.embed.numpy_bert import NumpyBertEmbedder, length_batches
from dreammem_bench.encoders import long_texts


def test_length_batches_group_similar_lengths_under_both_caps() -> None:
    lengths = [5, 256, 7, 256, 40, 6, 256, 100]
    batches = length_batches(lengths, most=3, tokens=600)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert [[lengths[i] for i in b] for b in batches] == [[5, 6, 7], [40, 100], [256, 256], [256]]
    for batch in batches:
        assert len(batch) <= 3 and len(batch) * max(lengths[i] for i in batch) <= 600
    assert length_batches([300], most=8, tokens=100) == [[0]]  # one text longer than the cap still goes
    assert length_batches([], most=8, tokens=100) == []


def test_batches_side_by_side_give_the_vectors_of_one_at_a_time() -> None:
    texts = [*long_texts(12), "ok", "", "Order #48213 ships on 2024-07-15.", *long_texts(6, seed=3)]
    serial = NumpyBertEmbedder(batch_size=4, threads=1)
    parallel = NumpyBertEmbedder(batch_size=4, threads=2)
    assert parallel.threads == 2 and serial.threads == 1
    one_by_one = np.stack([serial.embed_query(t) for t in texts])
    assert float(np.abs(serial.embed_documents(texts) - one_by_one).max()) < 1e-5
    assert float(np.abs(parallel.embed_documents(texts) - one_by_one).max()) < 1e-5
    np.testing.assert_allclose(np.linalg.norm(one_by_one, axis=1), 1.0, atol=1e-5)
