"""What a recall reads about its candidates, gathered at once: :class:`Surroundings`.

After the first-stage paths found their candidates, recall reads the same few things
about them, one store call each: their records, the session turns around the best of
them (the reply path), the records they replaced (the relevance gate), the records
they point at (a newer version, the memories a summary condensed: the current value
first) and the user's pinned memories. A store whose every call is a network round
trip (:attr:`~dreammem.stores.capabilities.RecordCapability.GATHERED_READS`) answers
them in one call (:meth:`~dreammem.stores.base.RecordStore.surroundings`);
:func:`read_one_by_one` is the same answer from the store's single reads, the default.
The recall keeps them in its :class:`~dreammem.recall.base.SearchMemo` and reads
anything else the usual way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dreammem.types import MemoryRecord

if TYPE_CHECKING:
    from dreammem.stores.base import RecordStore

__all__ = ["Surroundings", "read_one_by_one"]


@dataclass(frozen=True, slots=True)
class Surroundings:
    """One user's records around a recall's candidates, as the single reads return them.

    Attributes:
        rowids: The row ids asked for (whatever their status or owner).
        records: ``get_by_rowids`` of ``rowids`` and of their neighbours (this user's only).
        seeds: The row ids whose session neighbours were asked for.
        neighbours: ``session_neighbours`` of ``seeds``.
        replaced_of: The record ids whose replaced records were asked for (the ids of ``records``).
        replaced: ``superseded_by_any`` of ``replaced_of`` (ordered by row id).
        pointed_at: The record ids ``records`` point at (``superseded_by``, ``provenance``) and
            that are not among them.
        by_id: ``get`` of ``pointed_at`` (this user's only).
        pinned: ``find(pinned=True)``: the user's active pinned records, newest first (None: not asked).
    """

    rowids: tuple[int, ...]
    records: dict[int, MemoryRecord]
    seeds: tuple[int, ...] = ()
    neighbours: dict[int, tuple[int | None, int | None]] = field(default_factory=dict)
    replaced_of: frozenset[str] = frozenset()
    replaced: tuple[MemoryRecord, ...] = ()
    pointed_at: tuple[str, ...] = ()
    by_id: dict[str, MemoryRecord] = field(default_factory=dict)
    pinned: tuple[MemoryRecord, ...] | None = None


def pointers(records: Sequence[MemoryRecord]) -> list[str]:
    """The ids these records point at (a newer version, condensed sources) that are not among them."""
    own = {r.id for r in records}
    wanted = [str(r.superseded_by) for r in records if r.superseded_by is not None]
    wanted += [source for r in records for source in r.provenance]
    return [i for i in dict.fromkeys(wanted) if i not in own]


def read_one_by_one(
    store: RecordStore, user_id: str, rowids: Sequence[int], seeds: Sequence[int], *, pinned: bool
) -> Surroundings:
    """The :class:`Surroundings` of these rows from the store's single reads (one call each)."""
    asked = tuple(dict.fromkeys(int(r) for r in rowids))
    wanted = tuple(dict.fromkeys(int(r) for r in seeds))
    around = store.session_neighbours(user_id, wanted) if wanted else {}
    near = [n for pair in around.values() for n in pair if n is not None]
    records = store.get_by_rowids(user_id, list(dict.fromkeys([*asked, *near])))
    ids = frozenset(r.id for r in records.values())
    pointed = tuple(pointers(list(records.values())))
    return Surroundings(
        rowids=tuple(dict.fromkeys([*asked, *near])),
        records=records,
        seeds=wanted,
        neighbours=around,
        replaced_of=ids,
        replaced=tuple(store.superseded_by_any(user_id, sorted(ids))) if ids else (),
        pointed_at=pointed,
        by_id={r.id: r for r in store.get(user_id, pointed)} if pointed else {},
        pinned=tuple(store.find(user_id, pinned=True)) if pinned else None,
    )
