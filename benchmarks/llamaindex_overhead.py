"""What DreamMem adds to a LlamaIndex chat turn: latency of put + get per turn.

Runs the same synthetic conversation through (a) LlamaIndex's plain ``Memory`` (the
baseline) and (b) ``DreamMemMemory`` on an on-disk store with the real MiniLM
embedder, and prints p50/p95 per operation plus whether the first fact was recalled.
One MiniLM embedding of a short text is measured in the same run as a second baseline:
a DreamMemMemory put embeds one message, a get embeds one query.

    HF_HUB_OFFLINE=1 python benchmarks/llamaindex_overhead.py --turns 200
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from llama_index.core.llms import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemory, Memory

from dreammem import DreamMemory
from dreammem.embed import SentenceTransformerEmbedder
from llamaindex_dreammem import DreamMemMemory
from llamaindex_dreammem._shared import approximate_tokenizer

TOPICS = ["flight", "hotel", "budget", "dinner", "museum", "train", "weather", "meeting", "gift", "book"]


def conversation(turns: int) -> list[tuple[str, str]]:
    """Deterministic user/assistant pairs; the first states a fact asked about at the end."""
    pairs = [("I prefer window seats when I fly.", "Noted, window seats.")]
    for i in range(1, turns):
        topic = TOPICS[i % len(TOPICS)]
        pairs.append((f"Question {i} about the {topic} for day {i % 7}?", f"Answer {i} on the {topic}."))
    return pairs


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def run(memory: BaseMemory, pairs: list[tuple[str, str]]) -> dict[str, list[float]]:
    """Per turn, as SimpleChatEngine does: put(user), get(), put(assistant)."""
    timings: dict[str, list[float]] = {"put": [], "get": []}

    def timed(name: str, fn: Callable[[], object]) -> None:
        start = time.perf_counter()
        fn()
        timings[name].append((time.perf_counter() - start) * 1000)

    for user_text, reply in pairs:
        timed("put", lambda u=user_text: memory.put(ChatMessage(role=MessageRole.USER, content=u)))
        timed("get", memory.get)
        timed("put", lambda r=reply: memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=r)))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    pairs = conversation(args.turns)
    embedder = SentenceTransformerEmbedder()
    embed_ms = []
    for user_text, _ in pairs[:50]:
        start = time.perf_counter()
        embedder.embed_query(user_text)
        embed_ms.append((time.perf_counter() - start) * 1000)

    results = {}
    baseline = Memory.from_defaults(session_id="bench", tokenizer_fn=approximate_tokenizer)
    results["llama Memory (baseline)"] = run(baseline, pairs)
    with tempfile.TemporaryDirectory() as tmp, DreamMemory(Path(tmp), embedder=embedder) as store:
        dream = DreamMemMemory.from_defaults(memory=store, user_id="bench")
        results["DreamMemMemory (MiniLM, on disk)"] = run(dream, pairs)
        later = DreamMemMemory.from_defaults(memory=store, user_id="bench")
        later.put(ChatMessage(role=MessageRole.USER, content="Which seat do you book for me?"))
        recalled = "window seats" in (later.get()[0].content or "")
        records = store.stats(user_id="bench")["records"]["active"]

    print(f"turns={args.turns} (each: put user, get, put assistant)")
    print(f"{'memory':36} {'put p50':>9} {'put p95':>9} {'get p50':>9} {'get p95':>9}  (ms)")
    for name, t in results.items():
        print(
            f"{name:36} {statistics.median(t['put']):9.2f} {percentile(t['put'], 0.95):9.2f} "
            f"{statistics.median(t['get']):9.2f} {percentile(t['get'], 0.95):9.2f}"
        )
    embed_p50, embed_p95 = statistics.median(embed_ms[1:]), percentile(embed_ms[1:], 0.95)
    print(f"{'MiniLM embed_query (one text)':36} {embed_p50:9.2f} {embed_p95:9.2f}")
    print(f"records stored={records}; fact from turn 1 recalled in a new session: {recalled}")


if __name__ == "__main__":
    main()
