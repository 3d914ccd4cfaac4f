"""Which DreamMem versions may write to a Neo4j database, so that none writes incomplete nodes.

A newer DreamMem may add to what a record node must hold (schema 3 added ``content_head``,
which the index that finds same-text records reads). An older one, still running
beside it on the same database, would go on writing nodes without it. So the database
records, in the ``(:DMMeta {key: 'min_writer_version'})`` node, the lowest client
schema version that may write records to it; each client raises it to its own
:data:`MIN_WRITER_VERSION` when it opens the database (never lowers it), and:

* every statement that writes record nodes starts with :data:`WRITER_GUARD`, which
  writes nothing when the recorded version is above the client's, checked inside the
  write itself, so a process that opened the database before a newer one raised the
  version is refused too, at no extra round trip;
* the client then raises :class:`~dreammem.errors.StoreVersionError` (not retryable:
  upgrade DreamMem); reading still works.

Clients older than this mechanism (schema 3 without the guard) cannot be stopped by it.
"""

from __future__ import annotations

from dreammem.errors import StoreVersionError
from dreammem.stores.neo4j_client import Neo4jClient

__all__ = [
    "MIN_WRITER_KEY",
    "MIN_WRITER_VERSION",
    "SCHEMA_VERSION",
    "WRITER_GUARD",
    "raise_min_writer",
    "refuse_older_writer",
]

SCHEMA_VERSION = 6
"""1: keyword terms as the engine tokenised them; 2: as FTS5 indexes them (stems; see neo4j_keyword);
3: records carry ``content_head`` (the index that finds same-text records); 4: records carry
``system``, the library's notes, out of the caller's ``metadata`` (dreammem.system_meta); 5: an adapter
message's key and a keyed entry in ``system`` too (``notes_version`` 3 on every node); 6: records carry
the window their relative dates point at (``grounded``, ``grounded_start``/``grounded_end``: neo4j_times),
written with the record, grounded lazily on older nodes, dropped by an update of the text or time."""

MIN_WRITER_KEY = "min_writer_version"
"""The ``(:DMMeta)`` key of the lowest client schema version that may write records."""

MIN_WRITER_VERSION = 6
"""The lowest client schema version whose record nodes this version reads whole (4: ``system``; an
older client would keep the library's notes in ``metadata``, where this version never reads them;
5: a schema-4 client would keep message keys and keyed entries there; 6: a schema-5 client would edit a
text or time and leave its node's grounded window, which recall would then trust)."""

WRITER_GUARD = (
    f"OPTIONAL MATCH (guard:DMMeta {{key: '{MIN_WRITER_KEY}'}}) "
    "WITH guard WHERE coalesce(toInteger(guard.value), 0) <= $client_version "
)
"""The start of every statement that writes record nodes (takes ``$client_version``)."""


def min_writer(client: Neo4jClient) -> int:
    """The lowest client schema version the database lets write (0: none recorded)."""
    value = client.scalar("min_writer", "MATCH (m:DMMeta {key: $key}) RETURN m.value", key=MIN_WRITER_KEY)
    return int(value or 0)


def refuse_older_writer(client: Neo4jClient, client_version: int) -> None:
    """Raise :class:`~dreammem.errors.StoreVersionError` when the database needs a newer client."""
    needed = min_writer(client)
    if needed > client_version:
        raise StoreVersionError(
            f"this Neo4j database needs a DreamMem that writes schema version {needed} or later; "
            f"this one writes version {client_version}: upgrade DreamMem to write to it (reading still works)"
        )


def raise_min_writer(client: Neo4jClient, version: int) -> None:
    """Record ``version`` as the lowest writer version unless a higher one is recorded already."""
    client.run(
        "min_writer",
        "MERGE (m:DMMeta {key: $key}) "
        "SET m.value = toString(CASE WHEN coalesce(toInteger(m.value), 0) > $version "
        "THEN toInteger(m.value) ELSE $version END)",
        key=MIN_WRITER_KEY,
        version=version,
    )
