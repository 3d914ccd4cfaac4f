"""The framework adapters say what the facade says: same memories, same order, same scores.

The LangChain retriever, the LlamaIndex retriever, the framework-free search of
``agent_api`` and the recall block are each compared with ``DreamMemory.recall`` for
the same query, user and ``k``, on a store with two users, edits, a forgotten
memory and a dream.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from llama_index.core.schema import QueryBundle

from dreammem import DreamMemory
from dreammem.agent_api import memory_block, search_memory
from dreammem.embed import HashingEmbedder
from langchain_dreammem import DreamMemRetriever
from llamaindex_dreammem import DreamMemRetriever as LlamaRetriever
from tests.unit.dream.support import T0, seed

QUERIES = [
    "Which report format do I prefer?",
    "How much can we spend?",
    "Who signs the contracts at Acme?",
    "bees in the garden",
    "something nobody ever said",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> DreamMemory:
    memory = DreamMemory(tmp_path_factory.mktemp("adapters") / "s", embedder=HashingEmbedder())
    seed(memory, user="u1")
    seed(memory, user="u2", turns=[("s", "user", "Bob keeps bees in the garden")])
    memory.dream(user_id="u1")
    first = memory.get_all(user_id="u1", layer="semantic", limit=100)[0]
    memory.update(first.id, "I prefer CSV reports over PDF", user_id="u1")
    seed(memory, user="u1", turns=[("s9", "user", "later I read about bees")], start=T0 + timedelta(days=3))
    return memory


def _recall(memory: DreamMemory, query: str, k: int) -> list[tuple[str, float]]:
    return [(h.record.id, h.score) for h in memory.recall(query, user_id="u1", k=k)]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_the_langchain_retriever_returns_the_recall(store: DreamMemory, query: str, k: int) -> None:
    docs = DreamMemRetriever(memory=store, user_id="u1", k=k).invoke(query)
    expected = _recall(store, query, k)
    assert [d.id for d in docs] == [d.metadata["id"] for d in docs] == [i for i, _ in expected]
    assert [d.metadata["score"] for d in docs] == pytest.approx([s for _, s in expected])
    assert all(d.page_content == store.get(d.id, user_id="u1").content for d in docs)


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("k", [1, 3, 8])
def test_the_llamaindex_retriever_returns_the_recall(store: DreamMemory, query: str, k: int) -> None:
    nodes = LlamaRetriever(memory=store, user_id="u1", k=k).retrieve(QueryBundle(query))
    expected = _recall(store, query, k)
    assert [n.node.node_id for n in nodes] == [i for i, _ in expected]
    assert [n.score for n in nodes] == pytest.approx([s for _, s in expected])


@pytest.mark.parametrize("query", QUERIES)
def test_the_tool_search_and_the_block_hold_the_recall(store: DreamMemory, query: str) -> None:
    expected = [i for i, _ in _recall(store, query, 5)]
    found = search_memory(store, query, user_id="u1", k=5)
    assert [h["id"] for h in found.hits] == expected
    block = memory_block(store, query, user_id="u1", k=5, max_tokens=10_000)
    if not expected:
        assert block is None or block.included == ()
        return
    assert block is not None and list(block.included) == expected and block.dropped == ()
