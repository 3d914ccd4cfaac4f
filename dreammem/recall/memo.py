"""One recall's reads, held so that the paths and stages asking the same share them: :class:`SearchMemo`."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Protocol, TypeVar

from dreammem.types import MemoryRecord

if TYPE_CHECKING:
    from dreammem.recall.base import Candidate
    from dreammem.stores.base import RecordStore
    from dreammem.stores.surroundings import Surroundings

__all__ = ["RecordSource", "SearchMemo", "TextSource"]

T = TypeVar("T")


class SearchMemo:
    """One recall's searches by key, and the texts it read, so paths asking the same share them.

    A search ``depth`` deep answers every request for the same key that is as deep or
    shallower (its first ``depth``), and any request when it found fewer than it asked
    for (it holds them all); only a deeper request searches again. Texts are read once
    per row, and whole records once per row (nothing is written during a recall).
    """

    def __init__(self) -> None:
        self._held: dict[Hashable, tuple[int, list[Candidate]]] = {}
        self._texts: dict[int, str | None] = {}
        self._records: dict[int, MemoryRecord | None] = {}
        self._once: dict[Hashable, object] = {}
        self._by_id: dict[str, MemoryRecord | None] = {}
        self._around: dict[int, tuple[int | None, int | None] | None] = {}
        self._replaced: tuple[frozenset[str], tuple[MemoryRecord, ...]] | None = None

    def once(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()`` the first time ``key`` is asked in this recall, the held value after."""
        if key not in self._once:
            self._once[key] = compute()
        return self._once[key]  # type: ignore[return-value]

    def active_texts(self, store: TextSource, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """``store.active_texts(user_id, rowids)``, reading only the rows not read before."""
        missing = [r for r in dict.fromkeys(rowids) if r not in self._texts]
        if missing:
            found = store.active_texts(user_id, missing)
            self._texts.update((r, found.get(r)) for r in missing)
        return {r: text for r in rowids if (text := self._texts[r]) is not None}

    def records(self, store: RecordSource, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """``store.get_by_rowids(user_id, rowids)``, reading and decoding only the rows not read before.

        The temporal path orders its best matches by their records' times, and the pipeline
        loads the fused candidates' records: one recall decodes each record once.
        """
        missing = [r for r in dict.fromkeys(rowids) if r not in self._records]
        if missing:
            found = store.get_by_rowids(user_id, missing)
            self._records.update((r, found.get(r)) for r in missing)
            self._by_id.update((record.id, record) for record in found.values())
        return {r: record for r in rowids if (record := self._records[r]) is not None}

    def nearest(self, key: Hashable, depth: int, search: Callable[[int], list[Candidate]]) -> list[Candidate]:
        """The first ``depth`` candidates for ``key``: held, or ``search(depth)`` (then held)."""
        held = self._held.get(key)
        if held is None or (held[0] < depth and len(held[1]) == held[0]):
            held = (depth, search(depth))
            self._held[key] = held
        return held[1][:depth]

    def gather(self, found: Surroundings) -> None:
        """Hold what was read ahead about a recall's candidates (one user's)."""
        self._records.update((r, found.records.get(r)) for r in found.rowids)
        self._by_id.update((record.id, record) for record in found.records.values())
        self._by_id.update((i, found.by_id.get(i)) for i in found.pointed_at)
        self._around.update((r, found.neighbours.get(r)) for r in found.seeds)
        self._replaced = (found.replaced_of, found.replaced)
        if found.pinned is not None:
            self._once[("pinned",)] = list(found.pinned)

    def neighbours(
        self, store: RecordStore, user_id: str, rowids: Sequence[int]
    ) -> dict[int, tuple[int | None, int | None]]:
        """``store.session_neighbours(user_id, rowids)``, asking only for the rows not read before."""
        missing = [r for r in dict.fromkeys(rowids) if r not in self._around]
        if missing:
            found = store.session_neighbours(user_id, missing)
            self._around.update((r, found.get(r)) for r in missing)
        return {r: pair for r in dict.fromkeys(rowids) if (pair := self._around[r]) is not None}

    def by_ids(self, store: RecordStore, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """``store.get(user_id, ids)`` (in the order asked), asking only for the ids not read before."""
        missing = [i for i in dict.fromkeys(ids) if i not in self._by_id]
        if missing:
            found = {r.id: r for r in store.get(user_id, missing)}
            self._by_id.update((i, found.get(i)) for i in missing)
        return [record for i in ids if (record := self._by_id[i]) is not None]

    def replaced(self, store: RecordStore, user_id: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """``store.superseded_by_any(user_id, ids)``: read ahead when it covered every id, else asked."""
        if self._replaced is not None and set(ids) <= self._replaced[0]:
            wanted = set(ids)
            return [r for r in self._replaced[1] if r.superseded_by in wanted]
        return store.superseded_by_any(user_id, ids)

    def pinned(self, store: RecordStore, user_id: str) -> list[MemoryRecord]:
        """``store.find(user_id, pinned=True)``, once per recall."""
        return self.once(("pinned",), lambda: store.find(user_id, pinned=True))


class RecordSource(Protocol):
    """Where a recall reads whole records by row id (the record store)."""

    def get_by_rowids(self, user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        """Records of this user by row id (others left out)."""
        ...


class TextSource(Protocol):
    """Where a recall reads the texts of rows (the record store)."""

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        """The text of each active record of this user among these row ids (others left out)."""
        ...
