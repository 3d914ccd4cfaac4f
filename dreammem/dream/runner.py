"""Run one dream over a user's short-term queue: score -> distill -> migrate -> forget.

::

    queue -> score (metadata, rules, LLM) -> distill (keep / summarise / pattern / drop,
          verbatim guard) -> write plan (+ slot conflicts) -> ONE transaction:
          inserts + status changes + dequeue + dream log -> FAISS/graph updated

A dry run stops before the transaction and returns the same report.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from dreammem.dream.adjudicate import similar_records
from dreammem.dream.conflicts import llm_conflicts, resolve_slot_conflicts
from dreammem.dream.context import DreamContext, default_context
from dreammem.dream.distill import DistillPlan, distill
from dreammem.dream.linked import linked_ids
from dreammem.dream.llm_calls import LLMBudget, StructuredLLM
from dreammem.dream.migrate import commit_dream, plan_writes
from dreammem.dream.plan import WritePlan
from dreammem.dream.report import Change, Distilled, DreamReport
from dreammem.dream.score import score
from dreammem.stores.base import RecordStore
from dreammem.types import Kind, Layer, MemoryRecord, Role, Status, new_id, utcnow

if TYPE_CHECKING:
    from dreammem.engine import Engine

__all__ = ["make_llm", "run_dream"]

log = logging.getLogger(__name__)


def make_llm(engine: Engine) -> StructuredLLM | None:
    """The dream's budgeted view of the facade's LLM (None without one)."""
    if engine.llm is None:
        return None
    config = engine.config.dream
    return StructuredLLM(
        engine.llm,
        LLMBudget(config.max_llm_calls, config.max_llm_tokens),
        timeout=config.llm_timeout_seconds,
        retries=config.llm_retries,
    )


def run_dream(
    engine: Engine,
    user_id: str,
    *,
    dry_run: bool = False,
    context: DreamContext | None = None,
    trigger: str = "on_demand",
    now: datetime | None = None,
) -> DreamReport:
    """Consolidate the user's queue (see the module docstring) and return the report."""
    clock = time.perf_counter()
    started = now or utcnow()
    dream_id = new_id()
    store = engine.store
    config = engine.config.dream
    queued = store.queued(user_id, limit=config.max_records)
    left_queued = store.queue_size(user_id) - len(queued)
    active = [r for r in queued if r.is_active]
    history = [r for r in queued if r.status is Status.SUPERSEDED and r.role is Role.USER]
    llm = make_llm(engine) if active else None
    anchor = context or default_context(store, user_id, config)
    scored, notes = score(active, llm=llm, context=anchor, batch_size=config.llm_batch_size)
    twins = _twins(store, user_id, queued)
    existing = store.find(user_id, layers=[Layer.SEMANTIC], kinds=[Kind.PATTERN]) if active else []
    distilled = distill(
        scored,
        history=history,
        twins=twins,
        embed=engine.embedder.embed_documents,
        existing=existing,
        config=config,
        llm=llm,
        context=anchor,
        now=started,
        dream_id=dream_id,
        linked=linked_ids(store, user_id, queued),
    )
    plan = plan_writes(queued, distilled, twins, dream_id=dream_id, now=started)
    resolve_slot_conflicts(plan, store, user_id)
    if llm is not None:
        fresh = [p.record for p in distilled.patterns if p.record.slot is None]
        fresh += [s.record for s in distilled.kept if s.record.role is Role.USER and s.record.slot is None]
        fresh += [t for t in twins.values() if t.slot is None and plan.current(t).is_active]
        similar = similar_records(store, engine.vector_index, engine.embedder.embed_documents)
        notes += llm_conflicts(plan, store, user_id, fresh, llm, anchor, similar)[1]

    def report() -> DreamReport:
        elapsed = time.perf_counter() - clock
        return _report(
            dream_id=dream_id,
            user_id=user_id,
            trigger=trigger,
            dry_run=dry_run,
            started=started,
            elapsed=elapsed,
            queued=queued,
            left_queued=left_queued,
            distilled=distilled,
            plan=plan,
            llm=llm,
            notes=[*notes, *distilled.notes],
        )

    if dry_run or not queued:
        return report()
    final = commit_dream(engine, user_id, plan, report)
    log.info(
        "dream %s for a user: %d queued -> %d new, %d archived",
        dream_id,
        len(queued),
        len(plan.inserts),
        sum(1 for _, a in plan.updates.values() if a.status is Status.ARCHIVED),
    )
    return final


def _twins(store: RecordStore, user_id: str, queued: Sequence[MemoryRecord]) -> dict[str, MemoryRecord]:
    """Active semantic records the write path made from queued turns, by turn id."""
    if not queued:
        return {}
    ids = {r.id for r in queued}
    since = min(r.event_time for r in queued)
    out: dict[str, MemoryRecord] = {}
    for record in store.find(user_id, layers=[Layer.SEMANTIC], since=since):
        turn = record.system.get("from_turn")
        if isinstance(turn, str) and turn in ids:
            out[turn] = record
    return out


def _report(
    *,
    dream_id: str,
    user_id: str,
    trigger: str,
    dry_run: bool,
    started: datetime,
    elapsed: float,
    queued: Sequence[MemoryRecord],
    left_queued: int,
    distilled: DistillPlan,
    plan: WritePlan,
    llm: StructuredLLM | None,
    notes: Sequence[str],
) -> DreamReport:
    new = {r.id: plan.current(r) for r in plan.inserts}
    made = [
        Distilled(
            rep.record.id,
            rep.record.kind.value,
            rep.record.content,
            tuple(s.id for s in rep.sources),
            new[rep.record.id].status.value,
        )
        for rep in [*distilled.patterns, *distilled.summaries]
    ]
    superseded = [
        Change(record_id, after.superseded_by, "newer value or restated")
        for record_id, (_, after) in plan.updates.items()
        if after.status is Status.SUPERSEDED
    ]
    superseded += [
        Change(r.id, r.superseded_by, "written superseded: a newer value exists")
        for r in new.values()
        if r.status is Status.SUPERSEDED
    ]
    used = {source for d in made for source in d.sources}
    failures = llm.usage.failures if llm is not None else []
    mode = "rules" if llm is None else ("llm-degraded" if notes or failures else "llm")
    return DreamReport(
        dream_id=dream_id,
        user_id=user_id,
        level=1,
        trigger=trigger,
        dry_run=dry_run,
        mode=mode,
        started_at=started.isoformat(),
        finished_at=(started + timedelta(seconds=elapsed)).isoformat(),
        duration_seconds=round(elapsed, 4),
        queued=len(queued),
        left_queued=left_queued,
        kept=tuple(s.record.id for s in distilled.kept),
        distilled=tuple(made),
        archived=tuple(Change(d.record.id, None, d.reason) for d in distilled.dropped),
        superseded=tuple(superseded),
        migrated=tuple(Change(t.id, twin, "held by a semantic record") for t, twin in distilled.migrated),
        guard_kept=tuple(distilled.guard_kept),
        skipped=tuple(r.id for r in queued if not r.is_active and r.id not in used),
        llm=llm.usage.to_dict() if llm is not None else {"calls": 0, "tokens": 0},
        degraded=tuple(dict.fromkeys([*notes, *failures])),
    )
