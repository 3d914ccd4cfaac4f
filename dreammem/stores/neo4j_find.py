"""The Cypher of ``find`` on Neo4j, built from the filters a call gives and no others.

A filter written as ``($x IS NULL OR r.x = $x)`` is planned once for every value of
``$x``, so the planner cannot use the ``(user_id, session_id)`` index for it and reads
all of the user's nodes; the write path's session look-ups (a turn's context, the
assistant's echoes) then grew with the user's records and ran past the transaction
timeout at ~10,000 (docs/BENCHMARKS.md, session 23). Here a filter that is not given
is left out of the query and a session is matched in the node pattern, where the
index serves it.

:func:`find_many_statements` gathers many queries of the same shape (the same filters
given, the same limit and offset) into one ``UNWIND`` statement each. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dreammem.stores.roles.records import RecordQuery

__all__ = ["Statement", "find_many_statements", "find_statement"]

_BY_TIME = " USING INDEX r:DMRecord(user_id, event_time)"


@dataclass(frozen=True, slots=True)
class Statement:
    """A query with its parameters; ``of`` maps each batched row (``n``) to its query's place."""

    cypher: str
    params: dict[str, Any]
    of: tuple[int, ...] = ()


def _filters(query: RecordQuery, ref: Callable[[str], str]) -> tuple[str, list[str], dict[str, Any]]:
    """The ``MATCH`` pattern (and index hint), the conditions and their values; ``ref`` spells a reference."""
    values: dict[str, Any] = {"user_id": query.user_id}
    conditions: list[str] = []

    def where(condition: str, name: str, value: Any) -> None:
        conditions.append(condition.format(ref(name)))
        values[name] = value

    if query.statuses is not None:
        where("r.status IN {}", "statuses", [s.value for s in query.statuses])
    if query.layers is not None:
        where("r.layer IN {}", "layers", [layer.value for layer in query.layers])
    if query.kinds is not None:
        where("r.kind IN {}", "kinds", [k.value for k in query.kinds])
    if query.slot is not None:
        where("r.slot = {}", "slot", query.slot)
    if query.slot_prefix is not None:
        where("r.slot STARTS WITH {}", "slot_prefix", query.slot_prefix)
    if query.pinned is not None:
        where("r.pinned = {}", "pinned", query.pinned)
    if query.since is not None:
        where("r.event_time >= {}", "since", query.since.isoformat())
    if query.until is not None:
        where("r.event_time < {}", "until", query.until.isoformat())
    pattern = f"(r:DMRecord {{user_id: {ref('user_id')}}})"
    if query.session_id is not None:
        # Named: with a time bound the planner took the (user_id, event_time) index instead.
        pattern = (
            f"(r:DMRecord {{user_id: {ref('user_id')}, session_id: {ref('session_id')}}}) "
            "USING INDEX r:DMRecord(user_id, session_id)"
        )
        values["session_id"] = query.session_id
    elif query.pinned is not None:
        pattern += " USING INDEX r:DMRecord(user_id, pinned)"
    else:
        # The user's records in time order from the (user_id, event_time) index, so that a limit
        # stops the read (every record has an event time); without the hint the planner read all
        # of the user's records and sorted them, also for the recall's newest turns before `now`.
        pattern += _BY_TIME
        conditions.insert(0, "r.event_time IS NOT NULL")
    return pattern, conditions, values


def _body(query: RecordQuery, fields: str, ref: Callable[[str], str]) -> tuple[str, dict[str, Any]]:
    pattern, conditions, values = _filters(query, ref)
    order = "DESC" if query.newest_first else "ASC"
    # On the (user_id, event_time) index, ordering by the one user id first changes no order and
    # lets the planner read the index's order instead of sorting every row it found.
    by_user = f"r.user_id {order}, " if _BY_TIME in pattern else ""
    cypher = (
        f"MATCH {pattern} "
        + (f"WHERE {' AND '.join(conditions)} " if conditions else "")
        + f"WITH r ORDER BY {by_user}r.event_time {order}, r.rowid {order} SKIP $offset"
        + (" LIMIT $limit" if query.limit is not None else "")
        + f" RETURN {fields} AS r"
    )
    return cypher, values


def _paging(query: RecordQuery) -> dict[str, Any]:
    return {"offset": query.offset, **({"limit": query.limit} if query.limit is not None else {})}


def find_statement(fields: str, query: RecordQuery) -> Statement:
    """One ``find``: ``fields`` is the projection of a node ``r`` the rows return as ``r``."""
    cypher, values = _body(query, fields, lambda name: f"${name}")
    return Statement(cypher, {**values, **_paging(query)})


def find_many_statements(fields: str, queries: Sequence[RecordQuery]) -> list[Statement]:
    """Every query, one statement per shape; each row returns ``n`` (its place in ``of``) and ``r``.

    Cypher's ``LIMIT`` and ``SKIP`` take no row's variables, so queries of other limits
    or offsets go in statements of their own.
    """
    shapes: dict[tuple[str, int, int | None], tuple[list[int], list[dict[str, Any]]]] = {}
    for place, query in enumerate(queries):
        body, values = _body(query, fields, lambda name: f"a.{name}")
        places, asks = shapes.setdefault((body, query.offset, query.limit), ([], []))
        asks.append({**values, "n": len(places)})
        places.append(place)
    statements = []
    for (body, offset, limit), (places, asks) in shapes.items():
        paging = _paging(RecordQuery("", offset=offset, limit=limit))
        cypher = f"UNWIND $asks AS a CALL (a) {{ {body} }} RETURN a.n AS n, r"
        statements.append(Statement(cypher, {"asks": asks, **paging}, tuple(places)))
    return statements
