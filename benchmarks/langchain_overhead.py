"""What DreamMem costs a LangChain agent, against baselines measured in the same run.

1. Agent turn latency (create_agent + a scripted model, so only the framework and
   memory are timed): no memory vs DreamMemMiddleware (recall + inject + write-back)
   at N stored memories.
2. LangGraph store ops: DreamMemStore vs InMemoryStore, both embedding with the
   same MiniLM model: put, get, search(query).

    HF_HUB_OFFLINE=1 python benchmarks/langchain_overhead.py --sizes 200 1000 --turns 20 --store-size 200
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langchain.agents import create_agent
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from dreammem import DreamMemory
from dreammem.embed import SentenceTransformerEmbedder
from langchain_dreammem import DreamMemMiddleware, DreamMemStore
from langchain_dreammem.testing import ScriptedChatModel

TOPICS = ["flight", "hotel", "budget", "meal", "meeting", "report", "car", "doctor", "gift", "train"]


def _facts(n: int) -> list[str]:
    return [f"Note {i}: the {TOPICS[i % 10]} detail number {i * 7} for project {i % 37}" for i in range(n)]


def _pct(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _time(call: Callable[[int], Any], count: int) -> tuple[float, float]:
    samples = []
    for i in range(count):
        start = time.perf_counter()
        call(i)
        samples.append((time.perf_counter() - start) * 1000)
    return _pct(samples)


class MiniLMEmbeddings(Embeddings):
    """The same embedder for InMemoryStore, so the store comparison is like for like."""

    def __init__(self, inner: SentenceTransformerEmbedder) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text).tolist()  # type: ignore[no-any-return]


def agent_turns(embedder: SentenceTransformerEmbedder, size: int, turns: int, root: Path) -> None:
    with DreamMemory(root / f"agent-{size}", embedder=embedder) as memory:
        memory.add_many([{"content": f, "user_id": "alice"} for f in _facts(size)])
        for label, middleware in (("no memory", []), ("DreamMemMiddleware", [DreamMemMiddleware(memory)])):
            model = ScriptedChatModel(replies=[AIMessage(f"ok {i}") for i in range(turns + 3)])
            agent: Any = create_agent(model, middleware=middleware)

            def turn(i: int, agent: Any = agent) -> None:
                message = HumanMessage(f"what was the {TOPICS[i % 10]} detail?")
                agent.invoke(
                    {"messages": [message]},
                    {"configurable": {"thread_id": f"t{i}"}},
                    context={"user_id": "alice"},
                )

            for i in range(3):  # warm-up (the first encodes on a thread are slow)
                turn(turns + 1 + i)
            p50, p95 = _time(turn, turns)
            print(f"agent turn  N={size:<6} {label:<20} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms")


def store_ops(embedder: SentenceTransformerEmbedder, size: int, root: Path, queries: int = 50) -> None:
    """Puts one store after the other; gets and searches interleaved, so load swings hit both alike."""
    facts = _facts(size)
    with DreamMemory(root / f"store-{size}", embedder=embedder) as memory:
        index: Any = {"dims": embedder.dim, "embed": MiniLMEmbeddings(embedder), "fields": ["text"]}
        stores: list[tuple[str, BaseStore]] = [
            ("InMemoryStore", InMemoryStore(index=index)),
            ("DreamMemStore", DreamMemStore(memory, fields=["text"])),
        ]
        puts = {
            label: _time(lambda i, s=store: s.put(("alice", "notes"), f"k{i}", {"text": facts[i]}), size)
            for label, store in stores
        }
        gets: dict[str, list[float]] = {label: [] for label, _ in stores}
        searches: dict[str, list[float]] = {label: [] for label, _ in stores}
        hits = dict.fromkeys(searches, 0)
        for _, store in stores:  # warm-up
            for _ in range(3):
                store.search(("alice",), query="warm-up query", limit=5)
        for i in range(queries):
            for label, store in stores:
                start = time.perf_counter()
                store.get(("alice", "notes"), f"k{i % size}")
                gets[label].append((time.perf_counter() - start) * 1000)
                start = time.perf_counter()
                found = store.search(("alice",), query=f"the {TOPICS[i % 10]} detail number {i * 7}", limit=5)
                searches[label].append((time.perf_counter() - start) * 1000)
                hits[label] += bool(found) and found[0].key == f"k{i}"
        for label, _ in stores:
            search = _pct(searches[label])
            print(
                f"store ops   N={size:<6} {label:<14} put p50 {puts[label][0]:6.1f} ms | "
                f"get p50 {_pct(gets[label])[0]:6.2f} ms | "
                f"search p50 {search[0]:6.1f} p95 {search[1]:6.1f} ms | exact top-1 {hits[label]}/{queries}"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--store-size", type=int, default=200, help="items put one by one per store")
    args = parser.parse_args()
    embedder = SentenceTransformerEmbedder()
    print(f"cores={os.cpu_count()} embedder={embedder.name}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            agent_turns(embedder, size, args.turns, Path(tmp))
        store_ops(embedder, args.store_size, Path(tmp))


if __name__ == "__main__":
    main()
