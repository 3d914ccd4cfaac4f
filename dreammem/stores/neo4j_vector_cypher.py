"""The Cypher of Neo4j's batched vector searches: each embedding read once per statement, not per query.

A batch of queries (a write's statements, asking for their older neighbours) used to compute
each candidate's cosine inside one ``CALL`` per query, reading the candidate's embedding
property (384 floats) once per query that found it; the exact ranking read every vector of the
user once per query. Reading the property was most of the statement: here it is read once per
node, and the cosines are computed on the values read. The scores, counts and orders are those
of the per-query statements (the same function on the same values; ties by row id,
:mod:`dreammem.stores.ties`). A batch of one (a recall's search) keeps the per-query statement.

Each statement's ``where`` is the scope condition on node ``n`` (user, embedding present, and
whatever the index adds); the parameters are ``$queries``, ``$user_id``, and ``$index`` /
``$fetch`` (over-fetch) or ``$k`` (exact).
"""

from __future__ import annotations

__all__ = ["exact_ranking", "leaving_out", "over_fetch", "scope_size"]


def leaving_out(skip: range) -> tuple[str, dict[str, int]]:
    """The condition on node ``n`` leaving out the row ids ``skip``, and its parameters ("" if empty)."""
    if not skip:
        return "", {}
    return " AND NOT (n.rowid >= $skip_from AND n.rowid < $skip_to)", {
        "skip_from": skip.start,
        "skip_to": skip.stop,
    }


def over_fetch(prop: str, where: str, *, batch: bool) -> str:
    """5.26: per query ``i``, the index's candidates: ``seen``, the lowest cosine ``floor``, ``found``.

    ``found`` holds ``[rowid, cosine]`` of the candidates in scope. Batched, a query the index
    gave no candidate (an empty index) has no row (``seen`` 0).
    """
    if not batch:
        return (
            # Each query's list is bound once and each candidate's cosine computed once.
            "UNWIND range(0, size($queries) - 1) AS i WITH i, $queries[i] AS q CALL (i, q) { "
            "CALL db.index.vector.queryNodes($index, $fetch, q) YIELD node AS n "
            f"WITH n, vector.similarity.cosine(n.{prop}, q) AS s "
            f"WITH count(*) AS seen, min(s) AS floor, collect(CASE WHEN {where} "
            "THEN [n.rowid, s] END) AS found RETURN seen, floor, found } "
            "RETURN i, seen, floor, found ORDER BY i"
        )
    return (
        "UNWIND range(0, size($queries) - 1) AS i CALL (i) { "
        "CALL db.index.vector.queryNodes($index, $fetch, $queries[i]) YIELD node AS n RETURN n } "
        # One row per candidate node with the queries that found it: its embedding is read once.
        f"WITH n, collect(i) AS asked WITH n.rowid AS rowid, n.{prop} AS e, {where} AS kept, asked "
        "UNWIND asked AS i WITH i, rowid, kept, vector.similarity.cosine(e, $queries[i]) AS s "
        "WITH i, count(*) AS seen, min(s) AS floor, collect(CASE WHEN kept THEN [rowid, s] END) AS found "
        "RETURN i, seen, floor, found ORDER BY i"
    )


def exact_ranking(label: str, prop: str, where: str, *, batch: bool) -> str:
    """Per query ``i``, its ``$k`` best ``rowid, score`` among all the user's nodes in scope, exactly.

    Batched, the user's embeddings are read once into a list the queries rank (the list holds
    them all while the statement runs: ~3 KB a record of 384 floats).
    """
    rank = "ORDER BY score DESC, rowid ASC LIMIT $k"  # ties: stores/ties.py
    if not batch:
        return (
            "UNWIND range(0, size($queries) - 1) AS i WITH i, $queries[i] AS q CALL (i, q) { "
            f"MATCH (n:{label} {{user_id: $user_id}}) WHERE {where} "
            f"WITH n, vector.similarity.cosine(n.{prop}, q) AS score "
            f"RETURN n.rowid AS rowid, score {rank} "
            "} RETURN i, rowid, score"
        )
    return (
        f"MATCH (n:{label} {{user_id: $user_id}}) WHERE {where} WITH collect([n.rowid, n.{prop}]) AS pool "
        "UNWIND range(0, size($queries) - 1) AS i CALL (i, pool) { "
        "UNWIND pool AS p WITH p[0] AS rowid, vector.similarity.cosine(p[1], $queries[i]) AS score "
        f"RETURN rowid, score {rank} "
        "} RETURN i, rowid, score"
    )


def scope_size(label: str, where: str) -> str:
    """How many of the user's nodes the scope condition ``where`` on node ``n`` selects."""
    return f"MATCH (n:{label} {{user_id: $user_id}}) WHERE {where} RETURN count(n)"
