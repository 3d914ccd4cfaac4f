"""The Neo4j record store's gathered recall reads: a recall's candidates' surroundings in one query.

Recall reads the same few things about its first-stage candidates (see
:mod:`dreammem.stores.surroundings`); on Neo4j each single read is a Bolt round trip, so
:class:`SurroundingNodes` answers them all with one parameterised statement: the session
turns around the seeds, the records of the candidates and of those turns, the records
they replaced, the records they point at, and the user's pinned records. Each part is
the query of the single read it stands for, inside its own ``CALL`` subquery. Every
lookup names the index it seeks on (``USING INDEX SEEK``: a plain ``USING INDEX`` hint was met
by scanning the whole index when the plan was made on a young database), one ``CALL`` per
looked-up value: otherwise the planner has scanned the user's (or every user's) records, or a
whole index, which grows with the store.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_records import NEIGHBOUR_TURN, RECORD_FIELDS, from_props
from dreammem.stores.surroundings import Surroundings, pointers
from dreammem.types import Kind

__all__ = ["SURROUNDINGS", "SurroundingNodes"]


def _fields(var: str) -> str:
    """:data:`RECORD_FIELDS` of node ``var``."""
    return RECORD_FIELDS.replace("r {", f"{var} {{", 1)


SURROUNDINGS = (
    "CALL () { "
    "UNWIND $seeds AS rid "
    "CALL (rid) { MATCH (s:DMRecord {rowid: rid}) USING INDEX SEEK s:DMRecord(rowid) "
    "WHERE s.user_id = $user_id AND s.status = 'active' AND s.kind = $turn AND s.session_id IS NOT NULL "
    "RETURN s } "
    f"CALL {{ {NEIGHBOUR_TURN.format(before='<', order='DESC', name='before')} }} "
    f"CALL {{ {NEIGHBOUR_TURN.format(before='>', order='ASC', name='after')} }} "
    "RETURN collect([s.rowid, before_rowid, after_rowid]) AS around } "
    "CALL (around) { "
    "UNWIND $rowids + [a IN around | a[1]] + [a IN around | a[2]] AS rid "
    "WITH DISTINCT rid WHERE rid IS NOT NULL "
    "CALL (rid) { MATCH (r:DMRecord {rowid: rid}) USING INDEX SEEK r:DMRecord(rowid) "
    "WHERE r.user_id = $user_id RETURN r } "
    f"RETURN collect({RECORD_FIELDS}) AS records }} "
    "CALL (records) { "
    "UNWIND [x IN records | x.id] AS replacer "
    "CALL (replacer) { MATCH (o:DMRecord {superseded_by: replacer}) "
    "USING INDEX SEEK o:DMRecord(superseded_by) "
    "WHERE o.user_id = $user_id AND o.status = 'superseded' RETURN o } "  # a seek per candidate
    f"WITH o ORDER BY o.rowid RETURN collect({_fields('o')}) AS replaced }} "
    "CALL (records) { "
    "WITH [x IN records | x.id] AS own, "
    "[x IN records WHERE x.superseded_by IS NOT NULL | x.superseded_by] "
    "+ reduce(acc = [], x IN records | acc + coalesce(x.provenance, [])) AS wanted "
    "UNWIND wanted AS id WITH DISTINCT id, own WHERE NOT id IN own "
    "CALL (id) { MATCH (n:DMRecord {id: id}) USING INDEX SEEK n:DMRecord(id) WHERE n.user_id = $user_id "
    "RETURN n } "
    f"RETURN collect({_fields('n')}) AS pointed }} "
    "CALL () { "
    "MATCH (p:DMRecord {user_id: $user_id, pinned: true}) USING INDEX SEEK p:DMRecord(user_id, pinned) "
    "WHERE $pinned AND p.status = 'active' "
    f"WITH p ORDER BY p.event_time DESC, p.rowid DESC RETURN collect({_fields('p')}) AS pinned }} "
    "RETURN around, records, replaced, pointed, pinned"
)
"""The one statement of :meth:`SurroundingNodes.surroundings` (each ``CALL`` one single read)."""


class SurroundingNodes:
    """What a recall reads about its candidates, in one round trip (see the module docstring)."""

    client: Neo4jClient

    def surroundings(
        self, user_id: str, rowids: Sequence[int], seeds: Sequence[int], *, pinned: bool
    ) -> Surroundings:
        """The :class:`~dreammem.stores.surroundings.Surroundings` of these rows, in one query."""
        asked = list(dict.fromkeys(int(r) for r in rowids))
        wanted = list(dict.fromkeys(int(r) for r in seeds))
        (row,) = self.client.run(
            "surroundings",
            SURROUNDINGS,
            user_id=user_id,
            rowids=asked,
            seeds=wanted,
            turn=Kind.TURN.value,
            pinned=pinned,
        )
        around = {int(s): (_int(before), _int(after)) for s, before, after in row["around"]}
        near = [n for pair in around.values() for n in pair if n is not None]
        records = {int(props["rowid"]): from_props(props) for props in row["records"]}
        found = list(records.values())
        return Surroundings(
            rowids=tuple(dict.fromkeys([*asked, *near])),
            records=records,
            seeds=tuple(wanted),
            neighbours=around,
            replaced_of=frozenset(r.id for r in found),
            replaced=tuple(from_props(props) for props in row["replaced"]),
            pointed_at=tuple(pointers(found)),
            by_id={(r := from_props(props)).id: r for props in row["pointed"]},
            pinned=tuple(from_props(props) for props in row["pinned"]) if pinned else None,
        )


def _int(value: object) -> int | None:
    return None if value is None else int(str(value))
