"""Recall@10 and latency of one user's vector search among many users, on a Neo4j server.

DreamMem's own query (:class:`~dreammem.stores.neo4j_vectors.Neo4jVectorIndex`, whose
search is the record index's): on Neo4j 2026.01+ the index filters by user inside the
search (Cypher 25 ``SEARCH ... WHERE``), on 5.26 it over-fetches and falls back to
exact ranking. ``--users`` x ``--per-user`` vectors are stored, each user's drawn at
random from the pool, then ``--queries`` held-out vectors (spread over the users)
are searched; each answer is scored against exact cosine ranking of that user's
vectors (numpy). On servers that filter inside, every ``--overfetch`` factor is
measured (candidates asked per result, re-ranked exactly).

Vectors: ``--vectors .bench/lme-vectors.bin`` (the LongMemEval cache of real MiniLM
384-d encodings, see ``dreammem_bench/vector_cache.py``) or ``random`` (Gaussian).

    bash scripts/neo4j.sh up                                   # 5.26
    NEO4J_VERSION=2026.08.1 NEO4J_PORT=auto bash scripts/neo4j.sh up
    python benchmarks/filtered_vectors.py --uri bolt://127.0.0.1:PORT --json .bench/fv.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_vectors import Neo4jVectorIndex

_K = 10
_BATCH = 1_000
_NAME = "bench-filtered"


def pool(source: str, count: int, dim: int, seed: int) -> npt.NDArray[np.float32]:
    """``count`` unit vectors: rows of the vector cache file (shuffled), or Gaussian."""
    rng = np.random.default_rng(seed)
    if source == "random":
        data = rng.normal(size=(count, dim)).astype(np.float32)
    else:
        record = np.dtype([("key", "S40"), ("vector", "<f4", (dim,))])
        stored = np.memmap(Path(source), dtype=record, mode="r")
        if len(stored) < count:
            raise SystemExit(f"{source} holds {len(stored)} vectors, {count} needed")
        rows = np.sort(rng.choice(len(stored), size=count, replace=False))
        data = np.asarray(stored["vector"][rows], dtype=np.float32)[rng.permutation(count)]
    return data / np.linalg.norm(data, axis=1, keepdims=True)


def load(index: Neo4jVectorIndex, users: list[npt.NDArray[np.float32]]) -> float:
    """Store every user's vectors (row ids ``user * 10**6 + n``); seconds taken."""
    start = time.perf_counter()
    for user, vectors in enumerate(users):
        for lo in range(0, len(vectors), _BATCH):
            ids = [user * 10**6 + n for n in range(lo, min(lo + _BATCH, len(vectors)))]
            index.add(f"u{user}", ids, vectors[lo : lo + _BATCH])
    index.client.run("await", "CALL db.awaitIndexes(600)")
    return time.perf_counter() - start


def measure(
    index: Neo4jVectorIndex,
    users: list[npt.NDArray[np.float32]],
    queries: npt.NDArray[np.float32],
    factors: list[int],
) -> list[dict[str, Any]]:
    """Per over-fetch factor (0: the server's only mode): recall@10 against exact, latency,
    and answers outside the user's vectors. Factors take turns query by query, so a
    busy machine slows them alike."""
    recalls: dict[int, list[float]] = {f: [] for f in factors}
    times: dict[int, list[float]] = {f: [] for f in factors}
    foreign = dict.fromkeys(factors, 0)
    for n, query in enumerate(queries):
        user = n % len(users)
        exact = np.argsort(-(users[user].astype(np.float64) @ query), kind="stable")[:_K]
        want = {user * 10**6 + int(i) for i in exact}
        for factor in factors:
            if factor:
                index.inside_overfetch = factor
            start = time.perf_counter()
            hits = index.search(f"u{user}", query, _K)
            times[factor].append((time.perf_counter() - start) * 1000)
            got = {rowid for rowid, _ in hits}
            foreign[factor] += len([r for r in got if r // 10**6 != user])
            recalls[factor].append(len(got & want) / _K)
    runs = []
    for factor in factors:
        ms = np.asarray(times[factor])
        runs.append(
            {
                "overfetch": factor or None,
                "recall_at_10": round(float(np.mean(recalls[factor])), 4),
                "recall_min": min(recalls[factor]),
                "perfect_share": round(float(np.mean([r == 1.0 for r in recalls[factor]])), 3),
                "p50_ms": round(float(np.percentile(ms, 50)), 2),
                "p95_ms": round(float(np.percentile(ms, 95)), 2),
                "foreign": foreign[factor],
            }
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--uri", required=True, help="bolt:// URI of the server (auth off)")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--per-user", type=int, default=2_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--vectors", default=".bench/lme-vectors.bin", help="vector cache file, or 'random'")
    parser.add_argument("--overfetch", default="1,2,4", help="factors tried where the index filters inside")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    data = pool(args.vectors, args.users * args.per_user + args.queries, args.dim, args.seed)
    users = [data[u * args.per_user : (u + 1) * args.per_user] for u in range(args.users)]
    queries = data[args.users * args.per_user :]
    client = Neo4jClient(args.uri, query_timeout=600.0)
    agent = client.driver.get_server_info().agent
    try:
        index = Neo4jVectorIndex(client, args.dim, name=_NAME)
        index.reset()
        load_s = load(index, users)
        for query in queries[:20]:  # warm-up: plans and page cache
            index.search("u0", query, _K)
        index.inside_min_fetch = 0  # the sweep asks k * factor exactly
        factors = [int(f) for f in args.overfetch.split(",")] if index.filtered_inside else [0]
        runs = measure(index, users, queries, factors)
        index.reset()
    finally:
        client.close()
    report = {
        "server": agent,
        "filtered_inside": index.filtered_inside,
        "vectors": args.vectors,
        "users": args.users,
        "per_user": args.per_user,
        "queries": args.queries,
        "load_s": round(load_s, 1),
        "runs": runs,
    }
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
