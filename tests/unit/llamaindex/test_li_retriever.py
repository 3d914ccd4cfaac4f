"""DreamMemRetriever: recalled memories as NodeWithScore (real SQLite + FAISS, hashing embedder)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

from dreammem import DreamMemory, ScopeError, ValidationError
from llamaindex_dreammem import DreamMemRetriever


@pytest.fixture
def seeded(memory: DreamMemory) -> DreamMemory:
    memory.add("I am allergic to peanuts", user_id="u1", session_id="a")
    memory.add("The trip to Oslo costs 1,200 EUR", user_id="u1", session_id="a")
    memory.add("My cello lesson is on Tuesday", user_id="u1", session_id="b")
    memory.add("I am allergic to peanuts and shellfish", user_id="u2", session_id="c")
    return memory


def test_nodes_carry_the_memory_its_score_and_trace(seeded: DreamMemory) -> None:
    retriever = DreamMemRetriever(memory=seeded, user_id="u1", k=2)
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve("peanuts allergy")
    assert 1 <= len(nodes) <= 2 and all(isinstance(n, NodeWithScore) for n in nodes)
    top = nodes[0]
    assert isinstance(top.node, TextNode)
    assert top.node.get_content() == "I am allergic to peanuts"
    record = seeded.get(top.node.node_id, user_id="u1")  # node id = trace id
    assert record.content == top.node.get_content()
    meta = top.node.metadata
    assert meta["id"] == record.id and "vector" in meta["paths"] and meta["layer"] == "episodic"
    assert top.score == pytest.approx(meta["score"])
    assert [n.score for n in nodes] == sorted((n.score for n in nodes), reverse=True)
    for_llm = top.node.get_content(metadata_mode=MetadataMode.LLM)
    assert "event_time" in for_llm and "paths" not in for_llm and "fused_score" not in for_llm
    assert top.node.get_content(metadata_mode=MetadataMode.EMBED) == "I am allergic to peanuts"


def test_only_the_users_memories(seeded: DreamMemory) -> None:
    texts = [
        n.node.get_content() for n in DreamMemRetriever(memory=seeded, user_id="u1").retrieve("shellfish")
    ]
    assert all("shellfish" not in t for t in texts)
    assert DreamMemRetriever(memory=seeded, user_id="nobody").retrieve("peanuts") == []


async def test_async_gives_the_same_nodes_off_the_event_loop(seeded: DreamMemory) -> None:
    retriever = DreamMemRetriever(memory=seeded, user_id="u1", k=3)
    threads: list[int] = []
    original = seeded.recall

    def recording_recall(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.get_ident())
        return original(*args, **kwargs)

    seeded.recall = recording_recall  # type: ignore[method-assign]
    sync_ids = [n.node.node_id for n in retriever.retrieve("Oslo trip cost")]
    async_ids = [n.node.node_id for n in await retriever.aretrieve("Oslo trip cost")]
    assert async_ids == sync_ids
    assert threads[1] != threading.get_ident()  # the async call ran in a worker thread


def test_bad_arguments_raise_typed_errors(seeded: DreamMemory) -> None:
    with pytest.raises(ScopeError):
        DreamMemRetriever(memory=seeded, user_id="")
    with pytest.raises(ValidationError):
        DreamMemRetriever(memory=seeded, user_id="u1", k=0)
    with pytest.raises(ValidationError):
        DreamMemRetriever(memory=None, user_id="u1")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        DreamMemRetriever(memory=seeded, user_id="u1").retrieve("   ")
