"""A small load test on one Neo4j server: 4 processes of mixed operations lose, duplicate and leak nothing."""

from __future__ import annotations

import uuid

import pytest

from dreammem_bench.shared_load import run_load
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


def test_four_processes_of_mixed_operations(neo4j_server: Neo4jServer) -> None:
    seed = uuid.uuid4().int % 10**9  # a new draw each run; printed on failure to replay it
    report = run_load(neo4j_server.uri, workers=4, ops=40, seed=seed)
    assert report.acknowledged > 40, f"seed {seed}"
    audit = (report.lost, report.duplicated, report.cross_user, report.not_forgotten)
    assert audit == (0, 0, 0, 0), f"seed {seed}"
    assert report.failures == 0, f"seed {seed}"
    assert {"add", "recall"} <= set(report.p95_ms)
