"""One dream per user at a time across processes and hosts: a lease lock node in Neo4j.

:class:`LeaseLocks` keeps :class:`~dreammem.engine.locks.UserLocks`' interface (the
dream service takes either). Holding a user's lock takes the in-process lock first,
then a lease ``(:DMLease {name: "dream:<user>", user_id, owner, expires_at})`` in the
database. The lease is taken in one write (the uniqueness constraint on ``name``
serialises takers) when it is free, expired or already this holder's; expiry uses
the server's clock (``timestamp()``), so hosts' clocks never matter. While held, a
background thread renews it every third of its life; a holder that dies stops
renewing and the lease expires after ``lease_seconds``. A blocking hold polls until
the lease is free.

A lease that expired under a live holder (a pause longer than its life) may be
taken by another host; the dream's commit still checks that its queue entries are
there (:mod:`dreammem.dream.migrate`), so two dreams never both consume one queue.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from dreammem.engine.locks import UserLocks
from dreammem.errors import DreamMemError
from dreammem.stores.neo4j_client import Neo4jClient

__all__ = ["LeaseLocks"]

log = logging.getLogger(__name__)

_TAKE = """
MERGE (l:DMLease {name: $name})
  ON CREATE SET l.user_id = $user_id
WITH l
WHERE l.owner IS NULL OR l.owner = $owner OR l.expires_at < timestamp()
SET l.owner = $owner, l.expires_at = timestamp() + $ttl_ms
RETURN l.owner AS owner
"""
_RENEW = (
    "MATCH (l:DMLease {name: $name}) WHERE l.owner = $owner "
    "SET l.expires_at = timestamp() + $ttl_ms RETURN l.owner AS owner"
)
_RELEASE = "MATCH (l:DMLease {name: $name}) WHERE l.owner = $owner DELETE l"
_HELD = (
    "MATCH (l:DMLease {name: $name}) WHERE l.user_id = $user_id AND l.expires_at >= timestamp() "
    "RETURN l.owner AS owner"
)


class LeaseLocks(UserLocks):
    """Per-user dream locks that hold across processes and hosts (see the module docstring).

    Args:
        client: The server connection.
        lease_seconds: How long a lease lives without renewal.
        poll_seconds: How often a blocking hold asks again.
    """

    def __init__(
        self, client: Neo4jClient, *, lease_seconds: float = 60.0, poll_seconds: float = 0.2
    ) -> None:
        super().__init__()
        self._client = client
        self.lease_seconds = float(lease_seconds)
        self.poll_seconds = float(poll_seconds)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"

    def _params(self, user_id: str) -> dict[str, object]:
        return {
            "name": f"dream:{user_id}",
            "user_id": user_id,
            "owner": self.owner,
            "ttl_ms": int(self.lease_seconds * 1000),
        }

    def try_take(self, user_id: str) -> bool:
        """Take (or renew) the user's lease if it is free, expired or ours."""
        return bool(self._client.run("lease_take", _TAKE, **self._params(user_id)))

    def release(self, user_id: str) -> None:
        """Give the user's lease back (only if still ours)."""
        self._client.run("lease_release", _RELEASE, **self._params(user_id))

    @contextmanager
    def hold(self, user_id: str, *, blocking: bool = True) -> Iterator[bool]:
        """Hold the user's lock here and the lease in the database; yields False when busy and not blocking.

        Raises:
            BackendError: the server failed while taking the lease (nothing is held then).
        """
        with super().hold(user_id, blocking=blocking) as local:
            if not local:
                yield False
                return
            while not self.try_take(user_id):
                if not blocking:
                    yield False
                    return
                time.sleep(self.poll_seconds)
            stop = threading.Event()
            renewer = threading.Thread(
                target=self._renew, args=(user_id, stop), name=f"lease {user_id}", daemon=True
            )
            renewer.start()
            try:
                yield True
            finally:
                stop.set()
                renewer.join()
                try:
                    self.release(user_id)
                except DreamMemError as exc:  # it expires by itself
                    log.warning("releasing the dream lease of %s failed: %s", user_id, exc)

    def _renew(self, user_id: str, stop: threading.Event) -> None:
        while not stop.wait(self.lease_seconds / 3):
            try:
                if not self._client.run("lease_renew", _RENEW, **self._params(user_id)):
                    log.warning("the dream lease of %s expired and was taken by another holder", user_id)
                    return
            except DreamMemError as exc:  # retried at the next tick; the lease lives on meanwhile
                log.warning("renewing the dream lease of %s failed: %s", user_id, exc)

    def busy(self, user_id: str) -> bool:
        """True while a dream for this user runs here or holds a live lease anywhere."""
        if super().busy(user_id):
            return True
        return bool(self._client.run("lease_held", _HELD, **self._params(user_id)))
