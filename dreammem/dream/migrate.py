"""Migrate: turn a distill plan into writes, and commit them atomically.

:func:`plan_writes` lists every change (new records with provenance, importance of
kept records, archived sources, restatements superseded by a pattern) without
writing. :func:`commit` applies a plan in ONE SQLite transaction together with the
queue removal and the dream log: the queue is emptied exactly when the long-term
writes commit, so a crash leaves either the old state or the new one. Before writing,
the transaction checks that the queue entries and the records it read are unchanged
(another process may have dreamed or edited meanwhile); if not, it rolls back with a
retryable :class:`~dreammem.errors.BackendError`.

FAISS and the graph are derived: the engine's unit of work
(:mod:`dreammem.engine.unit`) updates them after the commit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dreammem.dream import journal
from dreammem.dream.conflicts import supersede
from dreammem.dream.distill import DistillPlan
from dreammem.dream.forget import archived
from dreammem.dream.linked import KEPT_WHY_KEY
from dreammem.dream.plan import WritePlan
from dreammem.dream.report import DreamReport
from dreammem.embed.base import normalize_rows
from dreammem.errors import BackendError
from dreammem.system_meta import SystemMeta
from dreammem.text.tokenize import tokenize
from dreammem.types import Kind, MemoryRecord

if TYPE_CHECKING:
    from dreammem.engine import Engine

__all__ = ["commit", "commit_dream", "embed_inserts", "plan_writes"]


def plan_writes(
    queued: Sequence[MemoryRecord],
    distilled: DistillPlan,
    twins: Mapping[str, MemoryRecord],
    *,
    dream_id: str,
    now: datetime,
) -> WritePlan:
    """Every change a dream makes, from its distill plan; nothing is written."""
    plan = WritePlan(dequeue=[r.id for r in queued])
    for item in distilled.kept:
        record = item.record
        system: SystemMeta = {**record.system, "dream_id": dream_id}
        if record.id in distilled.held:
            system[KEPT_WHY_KEY] = distilled.held[record.id]
        plan.change(dataclasses.replace(record, importance=item.score, system=system), before=record)
    for replacement in [*distilled.patterns, *distilled.summaries]:
        new = replacement.record
        plan.inserts.append(new)
        for source in replacement.replaces:
            kind = new.kind.value
            plan.change(
                archived(source, reason=f"distilled into {kind}", dream_id=dream_id, now=now, by=new.id),
                before=source,
            )
        # A pattern restates its observations: their semantic twins, and an earlier
        # pattern it carries on, are superseded by it.
        replaced = {r.id for r in replacement.replaces}
        for source in replacement.sources:
            if source.kind is Kind.PATTERN and source.id not in replaced and plan.current(source).is_active:
                supersede(plan, source, new)
            twin = twins.get(source.id)
            if twin is not None and plan.current(twin).is_active:
                supersede(plan, twin, new)
    for turn, twin_id in distilled.migrated:
        plan.change(
            archived(turn, reason="held by a semantic record", dream_id=dream_id, now=now, by=twin_id),
            before=turn,
        )
    for item in distilled.dropped:
        plan.change(archived(item.record, reason=item.reason, dream_id=dream_id, now=now), before=item.record)
    return plan


def _same(a: MemoryRecord, b: MemoryRecord) -> bool:
    """Equal in everything a dream reads (access counters may move under recall)."""
    return dataclasses.replace(a, last_accessed_at=None, access_count=0) == dataclasses.replace(
        b, last_accessed_at=None, access_count=0
    )


def _verify(engine: Engine, user_id: str, plan: WritePlan) -> list[MemoryRecord]:
    """Inside the transaction: fail if another writer changed what the plan was built on.

    The records are read locked for update, so no writer can change them between this
    check and the plan's writes (on Neo4j a plain read would not stop a forget there).

    Returns:
        The records as stored, read here (the unit of work need not read them again).
    """
    store = engine.store
    if plan.dequeue and len(store.queue_entries(user_id, plan.dequeue)) != len(plan.dequeue):
        raise BackendError("the queue changed during the dream (another dream ran?)", is_retryable=True)
    current = {r.id: r for r in store.get(user_id, list(plan.updates), for_update=True)}
    for record_id, (before, after) in list(plan.updates.items()):
        now_stored = current.get(record_id)
        if now_stored is None or not _same(now_stored, before):
            raise BackendError(f"record {record_id} changed during the dream", is_retryable=True)
        plan.updates[record_id] = (
            before,
            dataclasses.replace(
                after, last_accessed_at=now_stored.last_accessed_at, access_count=now_stored.access_count
            ),
        )
    return list(current.values())


def commit(
    engine: Engine,
    user_id: str,
    plan: WritePlan,
    *,
    log_entry: Callable[[], None],
    vectors: npt.NDArray[np.float32] | None = None,
) -> None:
    """Apply a write plan atomically in one unit of work (see the module docstring).

    Args:
        engine: The engine (its store, embedder and derived indexes).
        user_id: The scope.
        plan: What to write.
        log_entry: Writes the dream log row; called inside the transaction, last.
        vectors: Embeddings of ``plan.inserts`` (computed here when None).
    """
    embedder = engine.embedder
    if vectors is None:
        vectors = embed_inserts(engine, user_id, plan.inserts)
    terms = [" ".join(tokenize(r.content)) for r in plan.inserts]
    with engine.unit() as unit:
        stored = _verify(engine, user_id, plan)
        unit.insert(plan.inserts, vectors, terms=terms, model=embedder.name)
        unit.update([after for _, after in plan.updates.values()], read=stored)
        engine.store.dequeue(user_id, plan.dequeue)
        log_entry()


def commit_dream(
    engine: Engine,
    user_id: str,
    plan: WritePlan,
    report: Callable[[], DreamReport],
) -> DreamReport:
    """Commit a dream of either level with its log entry and undo data; returns its report.

    Args:
        engine: The engine.
        user_id: The scope.
        plan: The dream's writes.
        report: Builds the final report (called inside the transaction, so its
            duration covers the commit).
    """
    undo = journal.UndoData(
        inserted=[r.id for r in plan.inserts],
        before=[before.to_dict() for before, _ in plan.updates.values()],
        after_status={i: after.status.value for i, (_, after) in plan.updates.items()},
        queue=journal.queue_entries(engine.store, user_id, plan.dequeue),
    )
    done: list[DreamReport] = []

    def log_entry() -> None:
        done.append(report())
        journal.write_entry(engine.store, done[0], undo)

    commit(engine, user_id, plan, log_entry=log_entry)
    return done[0]


def embed_inserts(engine: Engine, user_id: str, records: Sequence[MemoryRecord]) -> npt.NDArray[np.float32]:
    """Vectors for new records.

    A summary gets the normalised centroid of the stored vectors of the records it
    replaces: it is found where they were found, and long summaries cost no model
    time. Other records (patterns are short) are embedded.
    """
    embedder = engine.embedder
    out = np.zeros((len(records), embedder.dim), dtype=np.float32)
    sources = [i for r in records if r.kind is Kind.SUMMARY for i in r.provenance]
    stored = engine.store.vectors_of(user_id, embedder.name, sources)
    to_embed: list[int] = []
    for n, record in enumerate(records):
        found = [stored[i] for i in record.provenance if i in stored]
        if record.kind is Kind.SUMMARY and len(found) == len(record.provenance) and found:
            out[n] = normalize_rows(np.mean(found, axis=0))[0]
        else:
            to_embed.append(n)
    if to_embed:
        out[to_embed] = embedder.embed_documents([records[n].content for n in to_embed])
    return out
