"""A batch's exact ranking of a large user's vectors runs in parts, with the same answers (real Neo4j 5.26).

One pool of ~20,000 records failed every write on the repo's 1 GB server
(``MemoryPoolOutOfMemoryError``, :mod:`dreammem.stores.neo4j_exact`): here the pool is made
tiny so a small user is ranked in parts, and the answers must equal numpy's exact ranking,
equal scores lower row id first.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dreammem.stores import neo4j_exact
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_vectors import Neo4jVectorIndex
from dreammem.testing.vector_index_suite import unit_rows
from tests.neo4j_server import Neo4jServer, opened_client

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


@pytest.fixture
def client(neo4j_server: Neo4jServer) -> Iterator[Neo4jClient]:
    yield from opened_client(neo4j_server)


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    return np.asarray(rows / np.linalg.norm(rows, axis=1, keepdims=True), dtype=np.float32)


def _exact(rows: np.ndarray, rowids: list[int], query: np.ndarray, k: int) -> list[int]:
    """Row ids by numpy's cosine, highest first, equal scores lower row id first."""
    scores = rows @ query
    order = sorted(range(len(rowids)), key=lambda n: (-float(scores[n]), rowids[n]))
    return [rowids[n] for n in order[:k]]


@pytest.mark.parametrize("pool", [4, None])
def test_a_batch_ranked_in_parts_equals_the_exact_ranking(
    client: Neo4jClient, monkeypatch: pytest.MonkeyPatch, pool: int | None
) -> None:
    index = Neo4jVectorIndex(client, 16, name=f"parts-{uuid.uuid4().hex[:6]}")
    rows = unit_rows(260, 16, 7)
    # The crowd sits around rows[0], where the queries are: the index's candidates are mostly the
    # crowd's, too few of alice's survive, so her vectors are ranked exactly.
    index.add("crowd", list(range(200)), _unit(rows[:200] * 0.1 + rows[0] * 0.9))
    near = _unit(rows[200:203] * 0.3 + rows[0] * 0.7)
    alice = np.concatenate([near, rows[203:230], near])  # three twins near the queries: ties across parts
    alice_ids = [1000 + n for n in range(30)] + [1500, 1100, 1031]
    index.add("alice", alice_ids, alice)
    statements: list[str] = []
    run = Neo4jClient.run

    def counted(self: Neo4jClient, action: str, cypher: str, /, **params: Any) -> list[Any]:
        statements.append(action)
        return run(self, action, cypher, **params)

    monkeypatch.setattr(Neo4jClient, "run", counted)
    if pool is not None:
        monkeypatch.setattr(neo4j_exact, "EXACT_POOL", pool)
    queries = _unit(rows[0] * 0.9 + unit_rows(4, 16, 9) * 0.1)
    try:
        found = index.search_many("alice", queries, 10)
    finally:
        index.reset()
    for query, hits in zip(queries, found, strict=True):
        assert [rowid for rowid, _ in hits] == _exact(alice, alice_ids, query, 10)
        want = {rowid: float(alice[alice_ids.index(rowid)] @ query) for rowid, _ in hits}
        assert np.allclose([score for _, score in hits], [want[rowid] for rowid, _ in hits], atol=1e-5)
    parts = statements.count("vector_exact_many")
    assert "vector_exact_size" in statements
    assert parts == (9 if pool == 4 else 1)  # 33 of alice's vectors, at most ~4 a part
