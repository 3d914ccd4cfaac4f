"""Recall's degradation boundaries beyond the paths: the query embedding, pinned memories, access
bookkeeping. Each failure leaves an answer, a ``degraded`` entry naming it, and the store as it was.

The embedder is a plug-in (the ``Embedder`` protocol): one that fails stands for a remote
embedding service that is down, as ``BrokenReranker`` does in test_pipeline_stages.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from dreammem import BackendError, DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder


class QueryOutageEmbedder(HashingEmbedder):
    """Embeds documents; every query embedding fails, as a remote service that went down does."""

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        raise ConnectionError("embedding service unreachable")


def test_a_failing_query_embedding_leaves_the_keyword_answer(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=QueryOutageEmbedder()) as memory:
        wanted = memory.add("The wifi password is hunter2", user_id="u1")
        memory.add("We had pasta for dinner", user_id="u1")
        result = memory.recall("wifi password", user_id="u1", paths=["vector", "keyword"])
        assert result.degraded["embed"] == "ConnectionError: embedding service unreachable"
        assert result.ids[0] == wanted.id and "keyword" in result[0].paths
        assert "embed" in result.timings_ms


def test_a_failing_access_record_still_returns_the_hits_untouched(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = memory.add("The boat is called Sea Otter", user_id="u1")

    def full_disk(*args: object) -> None:
        raise BackendError("database or disk is full", is_retryable=True)

    monkeypatch.setattr(memory.store, "touch", full_disk)
    result = memory.recall("boat name", user_id="u1")
    assert result.ids == [record.id]
    assert result.degraded == {"touch": "BackendError: database or disk is full"}
    monkeypatch.undo()
    stored = memory.get(record.id, user_id="u1")
    assert stored.access_count == 0 and stored.last_accessed_at is None


def test_pinned_memories_that_cannot_be_read_drop_out_alone(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("Allergic to peanuts", user_id="u1")
    ranked = memory.add("The boat is called Sea Otter", user_id="u1")
    real = memory.store.find

    def find(user_id: str, **kwargs: object) -> object:
        if kwargs.get("pinned"):
            raise BackendError("disk I/O error")
        return real(user_id, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(memory.store, "find", find)
    result = memory.recall("boat name", user_id="u1", paths=["keyword"])
    assert result.ids == [ranked.id]
    assert result.degraded == {"pinned": "BackendError: disk I/O error"}


def test_pinned_memories_join_every_answer_unless_turned_off(tmp_path: Path) -> None:
    for count, expected in ((3, True), (0, False)):
        config = DreamMemConfig(recall=RecallConfig(pinned_max_count=count))
        with DreamMemory(tmp_path / f"m{count}", embedder=HashingEmbedder(), config=config) as memory:
            pinned = memory.remember("Allergic to peanuts", user_id="u1")
            memory.add("The boat is called Sea Otter", user_id="u1")
            result = memory.recall("boat name", user_id="u1", paths=["keyword"])
            assert (pinned.id in result.ids) is expected, count
            assert not result.degraded
