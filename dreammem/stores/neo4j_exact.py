"""The exact ranking of one user's vectors on Neo4j, in bounded server memory.

When the vector index cannot answer a search alone (too few of the user's nodes among its
candidates, or a tie running past them: :mod:`dreammem.stores.neo4j_vectors`), the user's
vectors are ranked exactly. A batch of queries (a write's statements) reads the user's
embeddings once into a list the queries rank (:func:`~dreammem.stores.neo4j_vector_cypher.exact_ranking`);
that list is held whole while the statement runs, about 35 KB of the server's transaction
memory per record (measured on 5.26 with 384 floats: 70 MB at 2,000 records, 352 MB at
10,000). Neo4j caps all transactions together at 70 % of its heap by default, so one user of
~20,000 records failed every write on a 1 GB heap (``MemoryPoolOutOfMemoryError``) and one
of ~40,000 on 2 GB (docs/BENCHMARKS.md, session 28).

So a batch first counts the user's nodes in scope; above :data:`EXACT_POOL` it ranks them in
parts (``rowid % parts``), each part's pool at most about that size, and keeps each query's
best ``k`` of the parts' best ``k``: the same rows in the same order (highest score first,
lower row id first among equal scores, :mod:`dreammem.stores.ties`), one statement more per
part. A single query streams (its ``ORDER BY ... LIMIT`` keeps ``k`` rows) and is never split.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_vector_cypher import exact_ranking, scope_size

__all__ = ["EXACT_POOL", "rank_exactly"]

EXACT_POOL = 4_000
"""Most of a user's nodes one batched exact ranking holds at once (~140 MB of transaction memory)."""


def rank_exactly(
    client: Neo4jClient,
    label: str,
    prop: str,
    where: str,
    params: Mapping[str, object],
    vectors: list[list[float]],
    k: int,
    *,
    pool: int | None = None,
) -> list[list[tuple[int, float]]]:
    """Each query's ``k`` best ``(rowid, server score)`` among the nodes ``where`` selects, best first.

    ``where`` is the scope condition on node ``n`` with its ``params`` (``$user_id`` among
    them); the server's score is Neo4j's ``(1 + cos) / 2``. ``pool``: the most nodes a part holds
    (None: :data:`EXACT_POOL`).
    """
    if not vectors:
        return []
    batch = len(vectors) > 1
    parts = 1
    if batch:
        total = int(client.scalar("vector_exact_size", scope_size(label, where), **params) or 0)
        parts = max(1, math.ceil(total / (pool or EXACT_POOL)))
    found: list[list[tuple[int, float]]] = [[] for _ in vectors]
    for part in range(parts):
        split = f"{where} AND n.rowid % $parts = $part" if parts > 1 else where
        rows = client.run(
            "vector_exact_many",
            exact_ranking(label, prop, split, batch=batch),
            queries=vectors,
            k=k,
            parts=parts,
            part=part,
            **params,
        )
        for row in rows:
            found[int(row["i"])].append((int(row["rowid"]), float(row["score"])))
    if parts == 1:
        return found  # in the order the server ranked them (score, then row id)
    return [sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:k] for hits in found]
