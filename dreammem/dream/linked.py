"""Records in an update relation: the dream keeps them verbatim, out of summaries.

The write path links an older statement to a newer one about the same subject: it
supersedes the older one (``superseded_by``) or, unsure, marks it possibly outdated
(``possibly_outdated_by``, :mod:`dreammem.write.relations`). Recall uses those links
to put the newer value first and mark the older one. A summary is a new record that
nobody links to: compressing either side of a link into one would drop it, and the
old value would come back unmarked (or the new value would sink among chit-chat).
So both sides stay as they are, and the dream says why in their system notes.

A mark between two statements of which one states no value (a report of talk or thought
about a topic, an undecided one: :attr:`~dreammem.write.statements.Statement.states_value`)
links nothing: the write path no longer sets one, and one set before is chit-chat the
dream summarises like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from dreammem.stores.base import RecordStore
from dreammem.types import MemoryRecord, Status
from dreammem.write.relations import possibly_outdated_by, possibly_outdates
from dreammem.write.resolve import MAX_ANALYSED_CHARS
from dreammem.write.statements import analyse

__all__ = ["KEPT_WHY_KEY", "LINKED_REASON", "linked_ids"]

KEPT_WHY_KEY: Final = "dream_kept_why"
"""System key on a record the dream kept verbatim for a reason other than its score."""

LINKED_REASON = "in an update relation (newer or possibly outdated value): not summarised"


def linked_ids(store: RecordStore, user_id: str, queued: Sequence[MemoryRecord]) -> frozenset[str]:
    """Ids of queued records that another record's update link names, or that carry one.

    A queued record is linked when it is marked possibly outdated, when a queued record's
    mark names it (both stating a value), when it marked a stored record that still carries the
    mark (one an earlier dream kept), when a queued record was superseded by it, or when
    it superseded a stored record (:meth:`~dreammem.stores.base.RecordStore.superseded_by_any`).
    """
    by_id = {r.id: r for r in queued}
    linked: set[str] = set()
    for record in queued:
        marks = possibly_outdated_by(record)
        if marks and record.is_active and _states_value(record):
            newer = [m for m in marks if m not in by_id or _states_value(by_id[m])]
            if newer:
                linked.add(record.id)
                linked.update(m for m in newer if m in by_id)
        if record.status is Status.SUPERSEDED and record.superseded_by in by_id:
            linked.add(record.superseded_by)
    linked.update(_marked_earlier(store, user_id, [r for r in queued if r.id not in linked]))
    active = [r.id for r in queued if r.is_active and r.id not in linked]
    if active:
        linked.update(
            r.superseded_by
            for r in store.superseded_by_any(user_id, active)
            if r.superseded_by is not None and r.superseded_by in by_id
        )
    return frozenset(linked)


def _marked_earlier(store: RecordStore, user_id: str, queued: Sequence[MemoryRecord]) -> set[str]:
    """Queued value statements whose mark a stored active record still carries (the newer side)."""
    notes = {r.id: possibly_outdates(r) for r in queued if r.is_active and possibly_outdates(r)}
    wanted = [i for ids in notes.values() for i in ids]
    older = [r for r in store.get(user_id, wanted) if r.is_active and _states_value(r)] if wanted else []
    marks = {r.id: set(possibly_outdated_by(r)) for r in older}
    by_id = {r.id: r for r in queued}
    return {
        newer
        for newer, ids in notes.items()
        if any(newer in marks.get(i, ()) for i in ids) and _states_value(by_id[newer])
    }


def _states_value(record: MemoryRecord) -> bool:
    return analyse(record.content[:MAX_ANALYSED_CHARS]).states_value
