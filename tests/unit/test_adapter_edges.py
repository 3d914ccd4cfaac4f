"""Adapter edges: LangGraph store filters on odd values and namespaces, ops it does not know,
LlamaIndex wrappers' properties and empty writes. Real SQLite + FAISS, hashing embedder."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langgraph.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp
from llama_index.core.llms import ChatMessage, MessageRole, MockLLM

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from langchain_dreammem import DreamMemStore
from llamaindex_dreammem import DreamMemBlock, DreamMemRetriever, as_llm

U = "u1"


@pytest.fixture
def store(memory: DreamMemory) -> DreamMemStore:
    ours = DreamMemStore(memory)
    ours.put((U, "prefs"), "drink", {"text": "likes green tea", "n": 3})
    ours.put((U, "prefs"), "size", {"text": "shoe size", "n": "forty-two"})
    ours.put((U, "prefs"), "none", {"text": "no number at all"})
    ours.put((U, "travel", "prefs"), "seat", {"text": "window seat", "n": 7})
    return ours


def test_numeric_filters_skip_values_that_are_not_numbers(store: DreamMemStore) -> None:
    keys = {item.key for item in store.search((U,), filter={"n": {"$gte": 3}})}
    assert keys == {"drink", "seat"}  # "forty-two" and a missing n never match, nor raise
    assert {i.key for i in store.search((U,), filter={"n": {"$ne": 3}})} == {"size", "none", "seat"}
    assert [i.key for i in store.search((U,), filter={"n": {"$lt": "5"}})] == ["drink"]  # "5" reads as 5


def test_namespace_suffix_and_prefix_conditions_combine(store: DreamMemStore) -> None:
    assert store.list_namespaces(suffix=("prefs",)) == [(U, "prefs"), (U, "travel", "prefs")]
    assert store.list_namespaces(prefix=(U, "travel")) == [(U, "travel", "prefs")]
    assert store.list_namespaces(prefix=(U,), suffix=("travel", "prefs")) == [(U, "travel", "prefs")]
    assert store.list_namespaces(suffix=(U, "travel", "prefs", "deeper")) == []  # longer than any


def test_a_match_type_it_does_not_know_is_a_value_error(store: DreamMemStore) -> None:
    odd = MatchCondition(match_type="contains", path=("prefs",))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unsupported match type: contains"):
        store.batch([ListNamespacesOp(match_conditions=(odd,))])


def test_an_op_it_does_not_know_is_a_value_error_and_writes_nothing(store: DreamMemStore) -> None:
    class Unknown:
        namespace = (U, "prefs")

    with pytest.raises(ValueError, match="unknown operation type: Unknown"):
        store.batch([PutOp((U, "prefs"), "new", {"text": "never written"}), Unknown()])  # type: ignore[list-item]
    assert store.get((U, "prefs"), "new") is None


def test_the_async_batch_gives_what_the_sync_one_gives(store: DreamMemStore) -> None:
    ops = [GetOp((U, "prefs"), "drink"), GetOp((U, "prefs"), "missing")]
    sync = store.batch(ops)
    assert asyncio.run(store.abatch(ops)) == sync
    assert sync[0] is not None and sync[0].value["text"] == "likes green tea" and sync[1] is None


def test_llamaindex_retriever_and_block_keep_their_settings(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        retriever = DreamMemRetriever(memory=memory, user_id=U, k=4)
        assert (retriever.user_id, retriever.k) == (U, 4)
        block = DreamMemBlock(memory=memory, user_id=U)
        asyncio.run(block.aput([]))  # nothing to write
        assert memory.get_all(user_id=U, status=None) == []
        asyncio.run(block.aput([ChatMessage(role=MessageRole.USER, content="I keep bees")]))
        assert [r.content for r in memory.get_all(user_id=U)] == ["I keep bees"]


def test_a_wrapped_llamaindex_llm_says_what_it_wraps() -> None:
    llm = as_llm(MockLLM())
    assert repr(llm) == "LlamaIndexLLM(MockLLM)"
    assert isinstance(llm("say something"), str)
