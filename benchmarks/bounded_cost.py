"""Bounded cost per call: recall and dream time against input size, up to the documented limits.

Recall runs queries that carry digits and time words (what once sent the whole query
through dateparser) from 100 characters up to ``config.recall.max_query_chars``; a
dream runs over a session with one long record, from 1,000 characters up to
``config.write.max_content_chars``. Baselines in the same run: a 40-character query,
and a dream over the same session without the long record. Past the limits a call
must fail fast with a ``ValidationError``; the time to refuse is printed too.

    HF_HUB_OFFLINE=1 python benchmarks/bounded_cost.py            # MiniLM, all sizes
    HF_HUB_OFFLINE=1 python benchmarks/bounded_cost.py --hashing  # deterministic embedder
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dreammem import DreamMemory, ValidationError
from dreammem.embed import Embedder, HashingEmbedder, SentenceTransformerEmbedder

_WORDS = (
    "the order ships on May 3 and I paid 50 dollars last week to Alice for the Excel reports before "
    "the trip to Paris in 2023 we must never exceed 4,000 EUR at most 3 days only BigCo invoice"
).split()


def text_of(chars: int, seed: int) -> str:
    """Deterministic prose with numbers, dates and names, exactly ``chars`` long."""
    rng = random.Random(seed)
    out: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(_WORDS) if rng.random() < 0.8 else f"#{rng.randint(1, 10**6)}"
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:chars]


def timed(call: Callable[[], object], repeat: int) -> float:
    """The median wall time of ``repeat`` calls, in milliseconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def refused_ms(call: Callable[[], object]) -> float:
    """How long a call takes to refuse its input (it must raise ValidationError)."""
    started = time.perf_counter()
    try:
        call()
    except ValidationError:
        return (time.perf_counter() - started) * 1000
    raise SystemExit("an input over the limit was accepted")


def session(memory: DreamMemory, user: str, turns: int) -> None:
    memory.add_many(
        [
            {"content": text_of(120, seed=i), "user_id": user, "session_id": "s", "role": "user"}
            for i in range(turns)
        ]
    )


def recall_rows(memory: DreamMemory, sizes: list[int], repeat: int) -> None:
    session(memory, "r", 200)
    base = timed(lambda: memory.recall("what did I pay Alice on May 3?", user_id="r"), repeat)
    print(f"recall baseline (40-char query): {base:8.1f} ms")
    print(f"{'query chars':>12} {'recall ms':>10} {'x baseline':>10}")
    for size in sizes:
        query = text_of(size, seed=size) + " when did I pay Alice?"
        query = query[-size:]
        ms = timed(lambda q=query: memory.recall(q, user_id="r"), repeat)  # type: ignore[misc]
        print(f"{size:>12,} {ms:>10.1f} {ms / base:>10.2f}")
    over = text_of(130_000, seed=7)
    limit = getattr(memory.config.recall, "max_query_chars", None)
    if limit is None:  # a version without a query limit (the "before" column)
        print(f"130,000-char query, no limit: {timed(lambda: memory.recall(over, user_id='r'), 1):.0f} ms")
        return
    refused = refused_ms(lambda: memory.recall(over, user_id="r"))
    print(f"130,000-char query (limit {limit:,}): refused in {refused:.1f} ms")


def dream_rows(embedder: Embedder, root: Path, sizes: list[int], turns: int) -> None:
    def one(long_chars: int | None, name: str) -> float:
        with DreamMemory(root / name, embedder=embedder) as memory:
            session(memory, "d", turns)
            if long_chars:
                memory.add(text_of(long_chars, seed=long_chars), user_id="d", session_id="s")
            started = time.perf_counter()
            memory.dream(user_id="d")
            return time.perf_counter() - started

    base = one(None, "base")
    print(f"dream baseline ({turns} turns of 120 chars): {base:6.2f} s")
    print(f"{'record chars':>12} {'dream s':>8} {'s per 100k chars over baseline':>32}")
    for size in sizes:
        seconds = one(size, f"d{size}")
        print(f"{size:>12,} {seconds:>8.2f} {(seconds - base) / size * 100_000:>32.2f}")
    with DreamMemory(root / "limit", embedder=embedder) as memory:
        if not hasattr(memory.config.recall, "max_query_chars"):
            return  # a version without the limits (the "before" column): nothing is refused fast
        over = text_of(memory.config.write.max_content_chars + 1, seed=3)
        refused = refused_ms(lambda: memory.add(over, user_id="d"))
        print(f"record over the limit ({len(over):,} chars): refused in {refused:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hashing", action="store_true", help="use the deterministic HashingEmbedder")
    parser.add_argument("--query-sizes", default="100,1000,2000,4000,8000")
    parser.add_argument("--record-sizes", default="1000,10000,30000,100000")
    parser.add_argument("--turns", type=int, default=50, help="short turns in the dreamed session")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    embedder: Embedder = HashingEmbedder() if args.hashing else SentenceTransformerEmbedder()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        with DreamMemory(root / "recall", embedder=embedder) as memory:
            recall_rows(memory, [int(s) for s in args.query_sizes.split(",")], args.repeat)
        dream_rows(embedder, root, [int(s) for s in args.record_sizes.split(",")], args.turns)


if __name__ == "__main__":
    main()
