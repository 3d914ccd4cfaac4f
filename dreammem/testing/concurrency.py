"""A conformance check that needs two stores on one database: a locked read holds off other writers.

Run it with two stores of the same backend opened on the same database (two SQLite
stores on one file, two Neo4j stores on one server)::

    check_read_for_update_holds_off_writers(first, second, "some-user")
"""

from __future__ import annotations

import dataclasses
import threading

from dreammem.stores.base import RecordStore
from dreammem.testing.records import put, rec
from dreammem.types import Layer, Status

__all__ = ["check_read_for_update_holds_off_writers"]

WAIT_SECONDS = 0.5
"""How long the other writer must stay blocked while the first transaction is open."""


def check_read_for_update_holds_off_writers(first: RecordStore, second: RecordStore, user_id: str) -> None:
    """A record ``first`` read with ``for_update`` in a transaction: ``second``'s write waits for the commit.

    Without the lock, a forget could land between a dream's check of a record and its
    write, and the dream's write would bring the forgotten record back.
    """
    record = rec(user_id, "one record two writers change at once")
    put(first, [record])
    landed = threading.Event()

    def other_writer() -> None:
        second.update([dataclasses.replace(record, status=Status.DELETED)])
        landed.set()

    writer = threading.Thread(target=other_writer, daemon=True)
    try:
        with first.transaction():
            (held,) = first.get(user_id, [record.id], for_update=True)
            writer.start()
            assert not landed.wait(WAIT_SECONDS), "another writer changed a record read for update"
            first.update([dataclasses.replace(held, layer=Layer.SEMANTIC)])
        writer.join(30)
        assert landed.is_set(), "the other writer never got the record after the commit"
        (final,) = first.get(user_id, [record.id])
        assert final.status is Status.DELETED, "the other writer's change was not applied after the commit"
    finally:
        writer.join(30)
        first.delete(user_id, [record.id])
