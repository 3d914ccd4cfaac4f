"""Killing the Neo4j server (SIGKILL) mid-load loses nothing acknowledged (issue 13, done-when)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from dreammem_bench.outage import run_outage
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]


def test_a_killed_server_loses_nothing_acknowledged(neo4j_server: Neo4jServer, tmp_path: Path) -> None:
    report = run_outage(
        neo4j_server.uri,
        kill=neo4j_server.kill,
        restart=neo4j_server.restart,
        folder=tmp_path / "acks",
        writers=3,
        before=30,
        after=5,
        seed=uuid.uuid4().int % 10**9,
    )
    assert report.acknowledged >= 30 + 3 * 5
    assert report.acknowledged_after_restart >= 3 * 5
    assert (report.lost, report.duplicated, report.cross_user) == (0, 0, 0)
    assert report.untyped == []
    assert report.typed_errors > 0  # the writers did meet the outage, as typed retryable errors
