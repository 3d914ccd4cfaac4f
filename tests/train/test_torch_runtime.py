"""The torch runtime of the packaged MiniLM: the stored reference, the runtime setting, threads."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from dreammem import DreamMemory
from dreammem.config import DreamMemConfig, EmbeddingConfig
from dreammem.embed import NumpyBertEmbedder, SentenceTransformerEmbedder
from dreammem.embed.models import resolve_embedder
from scripts.minilm_reference import QUERY, TEXTS, TEXTS_FILE, VECTORS_FILE, reference_vectors

pytestmark = pytest.mark.integration


def test_the_stored_reference_is_what_sentence_transformers_gives(
    torch_minilm: SentenceTransformerEmbedder,
) -> None:
    stored = json.loads(TEXTS_FILE.read_text(encoding="utf-8"))
    assert (stored["texts"], stored["query"], stored["model"]) == (TEXTS, QUERY, torch_minilm.name)
    now = reference_vectors(torch_minilm, TEXTS, QUERY)
    assert float(np.abs(now - np.load(VECTORS_FILE, allow_pickle=False)).max()) < 1e-5


def test_runtime_torch_picks_sentence_transformers() -> None:
    assert isinstance(resolve_embedder("minilm", runtime="torch"), SentenceTransformerEmbedder)
    # sentence-transformers is installed here; auto still takes numpy.
    assert isinstance(resolve_embedder("minilm", runtime="auto"), NumpyBertEmbedder)


def test_a_store_written_on_numpy_opens_and_recalls_on_torch(tmp_path: Path) -> None:
    numpy_config = DreamMemConfig(embedding=EmbeddingConfig(model="minilm", runtime="numpy"))
    with DreamMemory(tmp_path / "store", config=numpy_config) as memory:
        memory.add("I prefer window seats on long flights.", user_id="u")
        memory.add("Order #48213 ships on 2024-07-15.", user_id="u")
        assert isinstance(memory.embedder, NumpyBertEmbedder)
    torch_config = DreamMemConfig(embedding=EmbeddingConfig(model="minilm", runtime="torch"))
    with DreamMemory(tmp_path / "store", config=torch_config) as memory:
        assert isinstance(memory.embedder, SentenceTransformerEmbedder)
        hits = memory.recall("which seat do I like?", user_id="u", k=1, paths=["vector"])
        assert hits[0].record.content == "I prefer window seats on long flights."


def test_query_encoding_on_one_thread_matches_batch_and_restores_threads(
    torch_minilm: SentenceTransformerEmbedder,
) -> None:
    before = torch.get_num_threads()
    query = torch_minilm.embed_query("where did we go on holiday last summer?")
    assert torch.get_num_threads() == before
    batch = torch_minilm.embed_documents(["where did we go on holiday last summer?"])[0]
    assert np.allclose(query, batch, atol=1e-5)
