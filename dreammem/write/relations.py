"""How the write path records what it decided about an older memory.

These are keys of the record's ``system`` notes (:class:`~dreammem.system_meta.SystemMeta`,
never the caller's ``metadata``), shared by the write path (which sets them), the dream
(which adjudicates the unsure ones) and recall (which marks an older hit):

* ``possibly_outdated_by`` on an **older, still active** record: the ids of newer
  records about the same subject that may replace it. The write path was not sure
  enough to supersede, so both stay active; recall should put the newer first and
  mark this one as earlier / possibly outdated while any of those ids is active.
* ``possibly_outdates`` on the **newer** record of such a pair: the ids of the older records
  it marked, so that a dream that finds the newer record queued and the older one stored
  (kept by an earlier dream) still knows the two are linked (:mod:`dreammem.dream.linked`).
  It is a hint: the older record's own mark is what counts.
* ``update_decision`` on a record the write path **superseded** (and on the newer
  record, under ``update_decisions``): what was decided, by which rule and why, so
  that :meth:`~dreammem.DreamMemory.history` says why a value changed and the
  change can be reverted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal

from dreammem.system_meta import SystemMeta
from dreammem.types import MemoryRecord

__all__ = [
    "DECISION_KEY",
    "OUTDATED_BY_KEY",
    "OUTDATED_WHY_KEY",
    "OUTDATES_KEY",
    "mark_possibly_outdated",
    "note_possibly_outdates",
    "possibly_outdated_by",
    "possibly_outdates",
    "unmark_possibly_outdated",
]

OUTDATED_BY_KEY: Final = "possibly_outdated_by"
"""System key on an older active record: ids of newer records that may replace it."""

OUTDATED_WHY_KEY: Final = "possibly_outdated_why"
"""System key beside it: ``{newer id: {"rule", "reason"}}``."""

OUTDATES_KEY: Final = "possibly_outdates"
"""System key on a newer record: ids of the older records it marked possibly outdated."""

DECISION_KEY: Final = "update_decision"
"""System key on a superseded record: ``{"action", "by", "rule", "reason"}``."""


def _ids(record: MemoryRecord, key: Literal["possibly_outdated_by", "possibly_outdates"]) -> tuple[str, ...]:
    value: object = record.system.get(key)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(v for v in value if isinstance(v, str))


def possibly_outdated_by(record: MemoryRecord) -> tuple[str, ...]:
    """The ids of newer records that may have replaced ``record`` (empty: none known)."""
    return _ids(record, OUTDATED_BY_KEY)


def possibly_outdates(record: MemoryRecord) -> tuple[str, ...]:
    """The ids of older records ``record`` marked possibly outdated when it was written."""
    return _ids(record, OUTDATES_KEY)


def note_possibly_outdates(record: MemoryRecord, older_ids: Sequence[str]) -> MemoryRecord:
    """``record`` noting that it marked ``older_ids`` possibly outdated (idempotent)."""
    ids = tuple(dict.fromkeys((*possibly_outdates(record), *older_ids)))
    if ids == possibly_outdates(record):
        return record
    return dataclasses.replace(record, system={**record.system, OUTDATES_KEY: list(ids)})


def mark_possibly_outdated(record: MemoryRecord, newer_id: str, reason: Mapping[str, Any]) -> MemoryRecord:
    """``record`` marked as possibly outdated by ``newer_id``, with why (idempotent)."""
    ids = possibly_outdated_by(record)
    if newer_id in ids:
        return record
    reasons: object = record.system.get(OUTDATED_WHY_KEY)
    why = dict(reasons) if isinstance(reasons, Mapping) else {}
    why[newer_id] = dict(reason)
    system: SystemMeta = {**record.system, OUTDATED_BY_KEY: [*ids, newer_id], OUTDATED_WHY_KEY: why}
    return dataclasses.replace(record, system=system)


def unmark_possibly_outdated(record: MemoryRecord, newer_ids: Sequence[str]) -> MemoryRecord:
    """``record`` without the given newer ids in its possibly-outdated mark."""
    ids = [i for i in possibly_outdated_by(record) if i not in set(newer_ids)]
    system = record.system.copy()
    reasons: object = system.get(OUTDATED_WHY_KEY)
    if isinstance(reasons, Mapping):
        kept = {k: v for k, v in reasons.items() if k in ids}
        if kept:
            system[OUTDATED_WHY_KEY] = kept
        else:
            system.pop(OUTDATED_WHY_KEY, None)
    if ids:
        system[OUTDATED_BY_KEY] = ids
    else:
        system.pop(OUTDATED_BY_KEY, None)
    return dataclasses.replace(record, system=system)
