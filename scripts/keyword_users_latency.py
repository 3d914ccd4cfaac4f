"""Keyword search latency of a store of ROWS rows over USERS users, without embeddings.

Usage: ``python scripts/keyword_users_latency.py ROWS USERS PATH`` (PATH: the SQLite
file, built on the first run and reused). Words are Zipf-distributed over 5,000; 300
queries of 1-4 words, ``max_term_share=0.1``, 30 results; prints p50/p95/mean in ms.
Used for issue 35 item 11 (docs/RELIABILITY.md, section 11).
"""

from __future__ import annotations

import random
import statistics
import sys
import time

from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.testing.records import put, rec


def main(rows: int, users: int, path: str) -> str:
    """Build the store when empty, then time the queries."""
    rng = random.Random(7)
    vocab = [f"w{n}" for n in range(5000)]
    weights = [1 / (n + 1) for n in range(5000)]
    store = SQLiteRecordStore(path)
    if store.count() == 0:
        batch = []
        for n in range(rows):
            batch.append(
                rec(f"user{n % users}", " ".join(rng.choices(vocab, weights, k=rng.randint(4, 20))), n)
            )
            if len(batch) == 2000:
                put(store, batch)
                batch = []
        if batch:
            put(store, batch)
    queries = [rng.choices(vocab[:2000], weights[:2000], k=rng.randint(1, 4)) for _ in range(300)]
    for words in queries[:20]:
        store.keyword_search("user0", words, 30, max_term_share=0.1)
    times = []
    for n, words in enumerate(queries):
        start = time.perf_counter()
        store.keyword_search(f"user{n % users}", words, 30, max_term_share=0.1)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    store.close()
    return (
        f"rows={rows} users={users} p50={statistics.median(times):.2f}ms "
        f"p95={times[int(0.95 * len(times))]:.2f}ms mean={statistics.mean(times):.2f}ms"
    )


if __name__ == "__main__":
    print(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
