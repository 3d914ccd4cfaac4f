"""Records in an update relation: the dream keeps them verbatim, out of summaries.

The write path links an older statement to a newer one about the same subject: it
supersedes the older one (``superseded_by``) or, unsure, marks it possibly outdated
(``possibly_outdated_by``, :mod:`dreammem.write.relations`). Recall uses those links
to put the newer value first and mark the older one. A summary is a new record that
nobody links to: compressing either side of a link into one would drop it, and the
old value would come back unmarked (or the new value would sink among chit-chat).
So both sides stay as they are, and the dream says why in their metadata.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.stores.base import RecordStore
from dreammem.types import MemoryRecord, Status
from dreammem.write.relations import possibly_outdated_by

__all__ = ["KEPT_WHY_KEY", "LINKED_REASON", "linked_ids"]

KEPT_WHY_KEY = "dream_kept_why"
"""Metadata key on a record the dream kept verbatim for a reason other than its score."""

LINKED_REASON = "in an update relation (newer or possibly outdated value): not summarised"


def linked_ids(store: RecordStore, user_id: str, queued: Sequence[MemoryRecord]) -> frozenset[str]:
    """Ids of queued records that another record's update link names, or that carry one.

    A queued record is linked when it is marked possibly outdated, when a queued record's
    mark names it, when a queued record was superseded by it, or when it superseded a
    stored record (:meth:`~dreammem.stores.base.RecordStore.superseded_by_any`).
    """
    ids = {r.id for r in queued}
    linked: set[str] = set()
    for record in queued:
        marks = possibly_outdated_by(record)
        if marks and record.is_active:
            linked.add(record.id)
            linked.update(m for m in marks if m in ids)
        if record.status is Status.SUPERSEDED and record.superseded_by in ids:
            linked.add(record.superseded_by)
    active = [r.id for r in queued if r.is_active and r.id not in linked]
    if active:
        linked.update(
            r.superseded_by
            for r in store.superseded_by_any(user_id, active)
            if r.superseded_by is not None and r.superseded_by in ids
        )
    return frozenset(linked)
