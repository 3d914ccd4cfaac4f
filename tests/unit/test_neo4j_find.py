"""The Cypher of ``find`` on Neo4j names only the filters given (no driver, no server)."""

from __future__ import annotations

from datetime import UTC, datetime

from dreammem.stores.neo4j_find import find_many_statements, find_statement
from dreammem.stores.roles.records import RecordQuery
from dreammem.types import Kind, Status

AT = datetime(2026, 3, 2, 9, tzinfo=UTC)


def test_a_find_leaves_out_every_filter_not_given_and_matches_the_session_in_the_pattern() -> None:
    query = RecordQuery("u1", kinds=[Kind.TURN], session_id="s1", since=AT, newest_first=False, limit=4)
    statement = find_statement("r {.*}", query)
    assert "IS NULL" not in statement.cypher  # a filter the planner cannot index is never written
    assert (
        "MATCH (r:DMRecord {user_id: $user_id, session_id: $session_id}) "
        "USING INDEX r:DMRecord(user_id, session_id)" in statement.cypher
    )
    assert "r.status IN $statuses AND r.kind IN $kinds AND r.event_time >= $since" in statement.cypher
    assert "ORDER BY r.event_time ASC, r.rowid ASC SKIP $offset LIMIT $limit" in statement.cypher
    assert statement.params == {
        "user_id": "u1",
        "statuses": ["active"],
        "kinds": ["turn"],
        "since": AT.isoformat(),
        "session_id": "s1",
        "offset": 0,
        "limit": 4,
    }


def test_a_find_of_any_status_and_no_limit_names_only_the_time_index_and_has_no_limit() -> None:
    statement = find_statement("r {.*}", RecordQuery("u1", statuses=None))
    assert "WHERE r.event_time IS NOT NULL WITH" in statement.cypher and "LIMIT" not in statement.cypher
    assert statement.params == {"user_id": "u1", "offset": 0}


def test_finds_of_one_shape_share_a_statement_and_each_row_names_its_query() -> None:
    queries = [
        RecordQuery("u1", session_id="s1", until=AT, limit=3),
        RecordQuery("u2", session_id="s9", until=AT, limit=3),
        RecordQuery("u1", session_id="s1", until=AT, limit=5),  # another limit: a statement of its own
        RecordQuery("u1", statuses=None, session_id="s2", until=AT, limit=3),  # no status filter: its own
        RecordQuery("u4", statuses=[Status.SUPERSEDED], session_id="s4", until=AT, limit=3),  # same shape
        RecordQuery("u3", session_id="s3", until=AT, limit=3),
    ]
    statements = find_many_statements("r {.*}", queries)
    assert [s.of for s in statements] == [(0, 1, 4, 5), (2,), (3,)]
    first = statements[0]
    assert first.cypher.startswith("UNWIND $asks AS a CALL (a) { MATCH (r:DMRecord {user_id: a.user_id, ")
    assert [a["n"] for a in first.params["asks"]] == [0, 1, 2, 3]
    assert [a["user_id"] for a in first.params["asks"]] == ["u1", "u2", "u4", "u3"]
    assert first.params["limit"] == 3 and statements[1].params["limit"] == 5
    assert "$statuses" not in first.cypher and "a.statuses" in first.cypher


def test_a_find_without_a_session_reads_the_time_index_in_its_order() -> None:
    statement = find_statement("r {.*}", RecordQuery("u1", until=AT, limit=3))
    assert statement.cypher.startswith(
        "MATCH (r:DMRecord {user_id: $user_id}) USING INDEX r:DMRecord(user_id, event_time) "
        "WHERE r.event_time IS NOT NULL AND r.status IN $statuses AND r.event_time < $until "
    )
    assert (
        "ORDER BY r.user_id DESC, r.event_time DESC, r.rowid DESC SKIP $offset LIMIT $limit"
        in statement.cypher
    )
    pinned = find_statement("r {.*}", RecordQuery("u1", pinned=True, limit=3)).cypher
    assert "USING INDEX r:DMRecord(user_id, pinned) WHERE r.status" in pinned
    assert "ORDER BY r.event_time DESC" in pinned
