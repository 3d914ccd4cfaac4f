"""Editing, erasing, listing and moving memories: the CRUD half of the facade.

:class:`CrudMixin` gives :class:`~dreammem.memory.DreamMemory` the calls a Mem0 user
reaches for: ``update``, ``forget_all``, ``purge``, ``export``, ``import_`` and paged
``get_all``, each with an ``a``-prefixed async twin. The store-level work lives in the
stores (:mod:`dreammem.stores.sqlite.erasure` for erasure); this module orders it and
keeps the derived indexes (keyword text, FAISS, graph) in step.

``forget`` and ``forget_all`` are soft: the records stay for audit and history.
``purge`` is erasure: the content leaves every place it lives.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from typing_extensions import deprecated

from dreammem.config import DreamMemConfig
from dreammem.engine import Engine, pending_erasure
from dreammem.erasure import EDITED, erasure_set, restored_by_erasure
from dreammem.errors import DreamMemError, ValidationError
from dreammem.stores.base import RecordStore
from dreammem.system_meta import SystemMeta
from dreammem.text.entities import extract_entities
from dreammem.text.tokenize import tokenize
from dreammem.transfer import ExportedRecord, export_lines, parse_export, split_lines
from dreammem.twins import async_twin
from dreammem.types import MemoryRecord, Role, Status, new_id, utcnow
from dreammem.validation import (
    check_content,
    check_filters,
    check_offset,
    check_page_limit,
    check_user_id,
    require_id,
)
from dreammem.write.instructions import SUSPECT_KEY, looks_like_instruction

__all__ = ["CrudMixin", "ImportResult", "MemoryPage", "PurgeResult"]

log = logging.getLogger(__name__)

_BATCH = 500


class MemoryPage(list[MemoryRecord]):
    """One page of :meth:`CrudMixin.get_all`: a list of records with what it needs to say.

    Attributes:
        twins: For a listed record that has a twin (a turn and the semantic record
            written from it at once say the same thing), the twin's id; both may be
            listed, and this says they are one memory.
        next_offset: The ``offset`` of the next page, or None on the last one.
    """

    def __init__(
        self, records: Iterable[MemoryRecord], *, twins: dict[str, str], next_offset: int | None
    ) -> None:
        super().__init__(records)
        self.twins = twins
        self.next_offset = next_offset


@dataclass(frozen=True, slots=True)
class PurgeResult:
    """What an erasure removed.

    Attributes:
        purged: Ids of the records erased (with ``dry_run``: that would be erased).
        restored: Sources a purged summary or pattern had archived or superseded, and
            older statements a purged one had replaced, active again (see
            :mod:`dreammem.erasure`; with ``dry_run``: that would be).
        dreams_scrubbed: Dream-log entries rewritten without them (for a whole user:
            deleted).
        graph_pending: Graph removals still queued (an external graph was down;
            replayed by ``replay_graph`` or the next write). Ids only, no content.
        compacted: True when SQLite rewrote its file and emptied its write-ahead log.
        dry_run: Nothing was changed.
    """

    purged: tuple[str, ...]
    restored: tuple[str, ...] = ()
    dreams_scrubbed: int = 0
    graph_pending: int = 0
    compacted: bool = False
    dry_run: bool = False


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import wrote.

    Attributes:
        imported: Records written.
        skipped: Records already in the store for this user (an import is idempotent).
        task_states: Task states written.
    """

    imported: int
    skipped: int
    task_states: int


class CrudMixin:
    """``update``, ``forget_all``, ``purge``, ``export``, ``import_``, paged ``get_all``."""

    if TYPE_CHECKING:  # provided by the facade
        config: DreamMemConfig
        engine: Engine

        store: RecordStore

        def get(self, memory_id: str, *, user_id: str) -> MemoryRecord: ...  # noqa: D102

    # -- list -----------------------------------------------------------------------------

    def get_all(
        self,
        *,
        user_id: str,
        layer: str | None = None,
        status: str | None = "active",
        limit: int = 100,
        offset: int = 0,
    ) -> MemoryPage:
        """Records of this user, newest first, one page at a time.

        Args:
            user_id: The scope.
            layer: Only this layer.
            status: Only this status (``None`` or ``"all"``: every status).
            limit: Page size, 1 to 10,000.
            offset: How many records to skip (``page.next_offset`` of the previous page).

        Returns:
            A list of records that also says which listed records are twins of
            another (``twins``) and where the next page starts (``next_offset``).
        """
        user = check_user_id(user_id)
        layers, statuses = check_filters(layer, status)
        size, start = check_page_limit(limit), check_offset(offset)
        found = self.store.find(user, layers=layers, statuses=statuses, limit=size + 1, offset=start)
        page = found[:size]
        more = start + size if len(found) > size else None
        return MemoryPage(page, twins=self.store.twins_of(user, page), next_offset=more)

    # -- edit -----------------------------------------------------------------------------

    def update(self, memory_id: str, content: str, *, user_id: str, twins: bool = True) -> MemoryRecord:
        """Change the text of a memory; its earlier text stays in :meth:`history`.

        The id stays; the earlier text becomes a superseded history version (out of
        every index). The memory is re-embedded and its keyword text, vector and
        graph entities rebuilt, so recall finds it by its new words only. With
        ``twins`` (the default) its twin (the turn it was written from, or the fact
        written from it) gets the same text.

        Returns:
            The memory as it is now.

        Raises:
            NotFoundError: no such memory for this user.
            ValidationError: bad content, or the memory is not active.
        """
        text = check_content(content, max_chars=self.config.write.max_content_chars)
        with self.engine.lock:
            record = self.get(memory_id, user_id=user_id)
            if not record.is_active:
                raise ValidationError(
                    f"memory {record.id} is {record.status.value}; only active memories change"
                )
            if record.content == text:
                return record
            targets = [record, *(t for t in self.store.twins(record) if t.is_active)] if twins else [record]
            now = utcnow()
            entities = tuple(e.text for e in extract_entities(text))
            changed = [
                dataclasses.replace(t, content=text, entities=entities, system=_flag(t, text))
                for t in targets
            ]
            # The earlier text, as a history version: no session (it is not a turn of the
            # session any more), no keyword text and no vector.
            versions = [
                dataclasses.replace(
                    t,
                    id=new_id(),
                    status=Status.SUPERSEDED,
                    superseded_by=t.id,
                    valid_to=now,
                    pinned=False,
                    session_id=None,
                    system={**t.system, EDITED: {"into": t.id, "at": now.isoformat()}},
                )
                for t in targets
            ]
            with self.engine.unit() as work:
                work.store.insert(versions, [""] * len(versions), [""] * len(versions))
                work.update(changed)  # re-embeds; FAISS and the graph follow the commit
                self._refresh_keyword_text(record.user_id, changed)
            return changed[0]

    @deprecated("delete_all() is now forget_all() (forget is the soft delete, purge the erasure)")
    def delete_all(self, *, user_id: str) -> int:
        """Deprecated name of :meth:`forget_all` (removed in the next release)."""
        return self.forget_all(user_id=user_id)

    def forget_all(self, *, user_id: str) -> int:
        """Soft-delete every active memory of this user (like :meth:`forget`, reversible by hand).

        :meth:`purge` without a memory id is the irreversible erasure.

        Returns:
            How many records were deleted.
        """
        user = check_user_id(user_id)
        now = utcnow()
        with self.engine.lock:
            active = self.store.find(user)
            for start in range(0, len(active), _BATCH):
                batch = active[start : start + _BATCH]
                self.engine.update(
                    [dataclasses.replace(r, status=Status.DELETED, valid_to=now) for r in batch]
                )
        return len(active)

    # -- erase ----------------------------------------------------------------------------

    def purge(self, memory_id: str | None = None, *, user_id: str, dry_run: bool = False) -> PurgeResult:
        """Erase a memory, or everything of a user, from every place it lives.

        With ``memory_id``: the memory, its twin, its other versions (earlier texts,
        other values of its slot) and every memory derived from any of them (a
        dream's summary may repeat its words); the other sources of such a summary
        become active again (:mod:`dreammem.erasure`). Without: every record, dream,
        queue entry and task state of the user.
        The records, full-text index, stored embeddings, FAISS file, graph (embedded
        or Neo4j), dream journal and undo data, queue and outbox lose them, and SQLite
        rewrites its file so the bytes are gone. Irreversible; :meth:`forget` is the
        soft delete. Another process holding the store open keeps what it has loaded
        in memory until it reopens.

        The compaction is recorded with the erasure's commit: a process killed before
        it finishes leaves the mark, and the next open (or purge) finishes it
        (:mod:`dreammem.engine.pending_erasure`). A purge of a memory already purged
        (one of the last 10,000) is a rerun: it finishes anything pending and returns
        an empty ``purged``.

        Raises:
            NotFoundError: no such memory for this user.
        """
        user = check_user_id(user_id)
        if not isinstance(dry_run, bool):
            raise ValidationError(f"dry_run must be a bool, got {type(dry_run).__name__}")
        with self.engine.lock:
            if memory_id is None:
                doomed = self.store.find(user, statuses=None)
            else:
                memory_id = require_id(memory_id, "memory_id")
                if (rerun := self._purged_before(memory_id, user, dry_run)) is not None:
                    return rerun
                doomed = erasure_set(self.store, self.get(memory_id, user_id=user))
            ids = tuple(r.id for r in doomed)
            restored = [] if memory_id is None else restored_by_erasure(self.store, user, doomed)
            if dry_run:
                return PurgeResult(ids, restored=tuple(r.id for r in restored), dry_run=True)
            if ids:
                _ = self.engine.vector_index  # opens the FAISS file, which holds the vectors too
            with self.engine.unit() as work:
                # Marked deleted first, so the graph drops them (an outbox graph on replay).
                work.update([dataclasses.replace(r, status=Status.DELETED) for r in doomed])
                # Committed with the erasure: a process killed before compacting, the next open finishes.
                pending_erasure.mark(work.store, user, ids)
                if memory_id is None:
                    dreams = work.store.erase_user(user)
                else:
                    work.update(restored)
                    _, dreams = work.store.erase_records(user, ids, sorted({r.content for r in doomed}))
                    self._refresh_keyword_text(user, [r for r in doomed if r.session_id is not None])
                work.rebuild_vectors()  # FAISS is rebuilt from SQLite and its file rewritten
            pending = self._erase_graph(user, whole_user=memory_id is None)
            compacted = pending_erasure.finish(self.store, [])  # FAISS was rewritten after the commit
        return PurgeResult(
            ids,
            restored=tuple(r.id for r in restored),
            dreams_scrubbed=dreams,
            graph_pending=pending,
            compacted=compacted,
        )

    def _purged_before(self, memory_id: str, user_id: str, dry_run: bool) -> PurgeResult | None:
        """A rerun of a purge whose memory is already erased: finish what is pending, else None."""
        gone = pending_erasure.was_erased(self.store, user_id, memory_id)
        if not gone or self.store.get(user_id, [memory_id]):
            return None
        if dry_run:
            return PurgeResult((), dry_run=True)
        return PurgeResult((), compacted=pending_erasure.finish(self.store, []))

    # -- move -----------------------------------------------------------------------------

    def export(self, *, user_id: str) -> str:
        """Everything of this user as JSON Lines (see :mod:`dreammem.transfer`).

        Every record with every field, history versions and forgotten records included,
        whether it waits for the next dream, and the saved task states.
        """
        user = check_user_id(user_id)
        with self.engine.lock:
            records = self.store.find(user, statuses=None, newest_first=False)
            queued = {r.id for r in self.store.queued(user)}
            states = list(self.store.task_states(user).items())
        items = [ExportedRecord(r, r.id in queued) for r in records]
        return "".join(line + "\n" for line in export_lines(user, items, states))

    def import_(self, data: str | Path | Iterable[str], *, user_id: str) -> ImportResult:
        """Read an :meth:`export` into this store, as ``user_id``'s memory.

        ``data`` is the exported text, a path to a file of it, or its lines (an open
        file). Every line is checked before anything is written, and everything is
        written in one transaction: an import killed midway leaves none of its records
        or task states. Records already stored for this user are skipped, so an import
        can be run again.

        Raises:
            ValidationError: a bad line (nothing written), or record ids that other
                records of this store already use.
        """
        user = check_user_id(user_id)
        parsed = parse_export(_lines(data), user_id=user, max_chars=self.config.write.max_content_chars)
        with self.engine.lock:
            ids = [item.record.id for item in parsed.records]
            mine = {r.id for r in self.store.get(user, ids)}
            if taken := self.store.ids_in_use([i for i in ids if i not in mine]):
                raise ValidationError(f"{len(taken)} record ids of the import are used by other records here")
            fresh = [item for item in parsed.records if item.record.id not in mine]
            records = [item.record for item in fresh]
            now = utcnow()

            def task_states(store: RecordStore) -> None:
                for session_id, state in parsed.task_states:
                    store.set_task_state(user, session_id, state, now)

            # One transaction: a killed import leaves nothing of itself (all or nothing).
            if not records:  # nothing to embed: no model is loaded for task states alone
                with self.store.transaction():
                    task_states(self.store)
            else:
                self.engine.persist(
                    records,
                    self.engine.context_texts(records),
                    enqueue=[item.record for item in fresh if item.queued],
                    supersede=False,
                    also=task_states,
                )
        return ImportResult(len(fresh), len(parsed.records) - len(fresh), len(parsed.task_states))

    def _refresh_keyword_text(self, user_id: str, touched: Sequence[MemoryRecord]) -> None:
        """Rebuild the keyword text of the sessions these records belong to.

        A turn's keyword context holds the words of the turns before it, so editing or
        erasing one changes what the turns after it are matched by.
        """
        sessions = sorted({r.session_id for r in touched if r.session_id is not None})
        solo = [r for r in touched if r.session_id is None and r.is_active]
        for session_id in sessions:
            records = self.store.find(user_id, statuses=None, session_id=session_id, newest_first=False)
            self._set_keyword_text(user_id, records)
        self._set_keyword_text(user_id, solo)

    def _set_keyword_text(self, user_id: str, records: Sequence[MemoryRecord]) -> None:
        if not records:
            return
        rowids = self.store.rowids(user_id, [r.id for r in records])
        for record, context in zip(records, self.engine.context_texts(records), strict=True):
            terms = " ".join(tokenize(record.content))
            self.store.set_match_text(rowids[record.id], terms, " ".join(tokenize(context)))

    def _erase_graph(self, user_id: str, *, whole_user: bool) -> int:
        """After the records' commit: replay the graph removals; how many still wait."""
        self.engine.flush_graph()
        pending = self.engine.graph_pending()
        if whole_user and pending == 0:
            try:
                self.engine.graph.clear(user_id)  # anything of the user the removals left
            except DreamMemError as exc:  # degradation boundary: nothing of the user is left to replay
                log.warning("clearing the graph of a purged user failed: %s", exc)
        return pending

    # -- async twins (each runs its sync method in a worker thread) ---------------------------

    aget_all = async_twin(get_all)
    aupdate = async_twin(update)
    aforget_all = async_twin(forget_all)
    adelete_all = deprecated("adelete_all() is now aforget_all()")(async_twin(forget_all))
    apurge = async_twin(purge)
    aexport = async_twin(export)
    aimport_ = async_twin(import_)


def _flag(record: MemoryRecord, text: str) -> SystemMeta:
    """The record's system notes with the instruction flag as its new text earns it (non-user roles)."""
    system = record.system.copy()
    system.pop(SUSPECT_KEY, None)
    if record.role not in (None, Role.USER) and looks_like_instruction(text):
        system[SUSPECT_KEY] = True
    return system


def _lines(data: str | Path | Iterable[str]) -> Iterable[str]:
    if isinstance(data, Path):
        try:
            return split_lines(data.read_bytes().decode("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise ValidationError(f"cannot read {data}: {exc}") from exc
    if isinstance(data, str):
        return split_lines(data)
    if isinstance(data, bytes) or not isinstance(data, Iterable):
        raise ValidationError(f"import data must be text, a Path or lines, got {type(data).__name__}")
    return data
