"""The second-level dream: housekeeping over long-term memory (default weekly).

1. **Archive** long-unused, low-importance records (importance <= ``low_importance``,
   not recalled or written for ``unused_days``; never pinned records, constraints or
   keyed records, see :mod:`dreammem.keyed`),
   and records whose ``metadata["expires_at"]`` has passed.
2. **Merge duplicates** (keyed records excepted): records that read the same after text normalisation, or
   embed at cosine >= ``duplicate_similarity`` with exactly the same protected tokens,
   collapse onto one keeper (pinned, then semantic, then most important, then newest).
   The others are archived with ``by`` = the keeper; the keeper's
   ``system["merged"]`` lists them (the merge log, also in the report).

Everything is committed in one transaction with the dream log, like a first-level
dream, and can be undone the same way.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from dreammem.dream.forget import archived, expired
from dreammem.dream.guard import protected_tokens
from dreammem.dream.migrate import commit_dream
from dreammem.dream.plan import WritePlan
from dreammem.dream.replacement import guarded, normalize_text
from dreammem.dream.report import Change, DreamReport
from dreammem.types import Kind, Layer, MemoryRecord, new_id, utcnow
from dreammem.write.keyed_slots import is_keyed

if TYPE_CHECKING:
    from dreammem.engine import Engine

__all__ = ["find_duplicates", "run_second_level"]

_LAYER_RANK = {Layer.SEMANTIC: 3, Layer.PROCEDURAL: 2, Layer.EPISODIC: 1, Layer.WORKING: 0}
_BLOCK = 1024


def _keeper_key(record: MemoryRecord) -> tuple[int, int, int, datetime]:
    return (int(record.pinned), _LAYER_RANK[record.layer], record.importance, record.event_time)


def find_duplicates(
    records: Sequence[MemoryRecord], vectors: npt.NDArray[np.float32], similarity: float
) -> list[list[MemoryRecord]]:
    """Groups of duplicates (two or more records each), the keeper first."""
    parent = list(range(len(records)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        parent[root(j)] = root(i)

    first_by_text: dict[str, int] = {}
    for i, record in enumerate(records):
        key = normalize_text(record.content)
        if key in first_by_text:
            join(first_by_text[key], i)
        else:
            first_by_text[key] = i
    tokens = [frozenset(protected_tokens(r.content)) for r in records]
    for start in range(0, len(records), _BLOCK):
        sims = vectors[start : start + _BLOCK] @ vectors.T
        for a, b in zip(*np.nonzero(sims >= similarity), strict=True):
            i, j = start + int(a), int(b)
            if i < j and tokens[i] == tokens[j]:
                join(i, j)
    groups: dict[int, list[MemoryRecord]] = {}
    for i, record in enumerate(records):
        groups.setdefault(root(i), []).append(record)
    return [sorted(g, key=_keeper_key, reverse=True) for g in groups.values() if len(g) > 1]


def _unused(record: MemoryRecord, cutoff: datetime, low: int) -> bool:
    if record.pinned or record.kind is Kind.CONSTRAINT or record.importance > low or is_keyed(record):
        return False
    last = max(t for t in (record.last_accessed_at, record.created_at, record.event_time) if t is not None)
    return last < cutoff


def run_second_level(
    engine: Engine, user_id: str, *, dry_run: bool = False, now: datetime | None = None, trigger: str
) -> DreamReport:
    """Run the second-level dream for one user and return its report."""
    clock = time.perf_counter()
    started = now or utcnow()
    dream_id = new_id()
    store = engine.store
    config = engine.config.dream
    queued = {r.id for r in store.queued(user_id)}
    long_term = [r for r in store.find(user_id) if r.id not in queued]
    plan = WritePlan()
    archived_changes: list[Change] = []
    gone = {r.id: "expired" for r in expired(long_term, started)}
    cutoff = started - timedelta(days=config.unused_days)
    gone.update(
        {r.id: "unused" for r in long_term if r.id not in gone and _unused(r, cutoff, config.low_importance)}
    )
    for record in long_term:
        if record.id in gone:
            plan.change(
                archived(record, reason=gone[record.id], dream_id=dream_id, now=started), before=record
            )
            archived_changes.append(Change(record.id, None, gone[record.id]))
    remaining = [r for r in long_term if r.id not in gone]
    # A keyed value (e.g. a LangGraph store item) lives until its key changes: never merged away.
    merged = _merge(engine, [r for r in remaining if not is_keyed(r)], plan, dream_id, started)

    def report() -> DreamReport:
        elapsed = time.perf_counter() - clock
        return DreamReport(
            dream_id=dream_id,
            user_id=user_id,
            level=2,
            trigger=trigger,
            dry_run=dry_run,
            mode="rules",
            started_at=started.isoformat(),
            finished_at=(started + timedelta(seconds=elapsed)).isoformat(),
            duration_seconds=round(elapsed, 4),
            archived=tuple(archived_changes),
            merged=tuple(merged),
            llm={"calls": 0, "tokens": 0},
        )

    if dry_run:
        return report()
    return commit_dream(engine, user_id, plan, report)


def _merge(
    engine: Engine, records: Sequence[MemoryRecord], plan: WritePlan, dream_id: str, now: datetime
) -> list[Change]:
    """Plan duplicate merges; returns the merge log."""
    if len(records) < 2:
        return []
    vectors = engine.embedder.embed_documents([r.content for r in records])
    log: list[Change] = []
    for group in find_duplicates(records, vectors, engine.config.dream.duplicate_similarity):
        keeper, others = group[0], group[1:]
        ok, _, _ = guarded(keeper.content, others, "merge")
        if not ok:
            continue
        for other in ok:
            plan.change(
                archived(other, reason="duplicate", dream_id=dream_id, now=now, by=keeper.id), before=other
            )
            log.append(Change(other.id, keeper.id, "duplicate"))
        merged_ids = [*keeper.system.get("merged", []), *(o.id for o in ok)]
        plan.change(
            dataclasses.replace(keeper, system={**keeper.system, "merged": merged_ids}), before=keeper
        )
    return log
