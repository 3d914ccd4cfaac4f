"""Twins on Neo4j: the records with the same text linked to a record by provenance (either way).

A turn and the semantic record written from it say the same thing; a decision on one
applies to the other. The ``(user_id, content_head)`` index finds the same-text nodes,
the whole text and the provenance decide.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_records import CONTENT_HEAD_CHARS, RECORD_FIELDS, from_props
from dreammem.types import MemoryRecord

__all__ = ["TwinNodes"]


class TwinNodes:
    """``twins`` and ``twins_many`` of the Neo4j record store."""

    client: Neo4jClient

    def twins(self, record: MemoryRecord) -> list[MemoryRecord]:
        """Records with the same text linked to this one by provenance (either way)."""
        rows = self.client.run(
            "twins",
            # The head finds the same-text rows by index (dm_record_content_head), the whole text decides.
            "MATCH (r:DMRecord {user_id: $user_id, content_head: left($content, $head)}) "
            "WHERE r.content = $content AND r.id <> $id "
            f"AND ($id IN r.provenance OR r.id IN $provenance) RETURN {RECORD_FIELDS} AS r",
            user_id=record.user_id,
            content=record.content,
            head=CONTENT_HEAD_CHARS,
            id=record.id,
            provenance=list(record.provenance),
        )
        return [from_props(row["r"]) for row in rows]

    def twins_many(self, records: Sequence[MemoryRecord]) -> dict[str, list[MemoryRecord]]:
        """:meth:`twins` of each record, by record id: one statement for all (the write path's decisions)."""
        out: dict[str, list[MemoryRecord]] = {r.id: [] for r in records}
        asks = [
            {"id": r.id, "user_id": r.user_id, "content": r.content, "provenance": list(r.provenance)}
            for r in {r.id: r for r in records}.values()
        ]
        if not asks:
            return out
        rows = self.client.run(
            "twins_many",
            "UNWIND $asks AS a MATCH (r:DMRecord {user_id: a.user_id, content_head: left(a.content, $head)}) "
            "WHERE r.content = a.content AND r.id <> a.id AND (a.id IN r.provenance OR r.id IN a.provenance) "
            f"RETURN a.id AS of, {RECORD_FIELDS} AS r ORDER BY r.rowid",
            asks=asks,
            head=CONTENT_HEAD_CHARS,
        )
        for row in rows:
            out[str(row["of"])].append(from_props(row["r"]))
        return out
