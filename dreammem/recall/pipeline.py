"""The recall pipeline: run paths, fuse, rerank, order, trace.

::

    query -> [path ...] (each scoped to the user) -> reciprocal rank fusion
          -> reranker over the top candidates (optional) -> pinned first -> hits

A path that raises drops out of fusion with a warning and is listed in
``RecallResult.degraded``; recall still answers from the others.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from dreammem.config import RecallConfig
from dreammem.recall.base import Candidate, RecallPath, RecallQuery
from dreammem.recall.fusion import Fused, reciprocal_rank_fusion
from dreammem.recall.result import Hit, RecallResult
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.types import MemoryRecord

__all__ = ["RecallPipeline", "Reranker"]

log = logging.getLogger(__name__)


class Reranker(Protocol):
    """Scores (query, memory text) pairs; higher means more relevant."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text."""
        ...


@dataclass(slots=True)
class _Scored:
    fused: Fused
    record: MemoryRecord
    rerank: float | None = None


class RecallPipeline:
    """Runs the configured paths and stages for one store.

    Args:
        store: The record store (loads the records behind candidate row ids).
        paths: The recall paths by name.
        config: Pipeline settings.
        reranker: Optional cross-encoder stage.
    """

    def __init__(
        self,
        store: SQLiteRecordStore,
        paths: Mapping[str, RecallPath],
        config: RecallConfig,
        reranker: Reranker | None = None,
    ) -> None:
        self._store = store
        self.paths = dict(paths)
        self.config = config
        self.reranker = reranker

    def run(self, query: RecallQuery, k: int, *, paths: Sequence[str] | None = None) -> RecallResult:
        """Recall ``k`` memories (plus every pinned one) for the query."""
        timings: dict[str, float] = {}
        degraded: dict[str, str] = {}
        ranked: dict[str, list[Candidate]] = {}
        for name in paths if paths is not None else self.config.paths:
            path = self.paths.get(name)
            if path is None:
                continue
            start = time.perf_counter()
            try:
                ranked[name] = path.search(query)
            except Exception as exc:  # degradation boundary: one path may fail
                log.warning("recall path %s failed: %s", name, exc)
                degraded[name] = f"{type(exc).__name__}: {exc}"
            timings[name] = (time.perf_counter() - start) * 1000
        fused = reciprocal_rank_fusion(ranked, k=self.config.rrf_k)
        top = fused[: max(self.config.rerank_top, k)]
        records = self._store.get_by_rowids(query.user_id, [f.rowid for f in top])
        scored = _dedupe(
            [_Scored(f, records[f.rowid]) for f in top if f.rowid in records and records[f.rowid].is_active]
        )
        if self.reranker is not None and scored:
            start = time.perf_counter()
            try:
                head = scored[: self.config.rerank_top]
                for item, value in zip(
                    head, self.reranker.score(query.text, [s.record.content for s in head]), strict=True
                ):
                    item.rerank = value
                head.sort(key=lambda s: -(s.rerank or 0.0))
                scored = head + scored[len(head) :]
            except Exception as exc:  # degradation boundary: keep fusion order
                log.warning("reranker %s failed: %s", self.reranker.name, exc)
                degraded["rerank"] = f"{type(exc).__name__}: {exc}"
            timings["rerank"] = (time.perf_counter() - start) * 1000
        hits = [self._hit(s) for s in scored if not s.record.pinned][:k]
        pinned = self._pinned(query.user_id, {s.record.id: s for s in scored})
        result = RecallResult(
            query=query.text,
            user_id=query.user_id,
            hits=tuple(pinned + hits),
            degraded=degraded,
            timings_ms=timings,
        )
        self._store.touch(query.user_id, result.ids, query.now)
        return result

    def _pinned(self, user_id: str, found: Mapping[str, _Scored]) -> list[Hit]:
        pinned = self._store.find(user_id, pinned=True)  # newest first
        return [self._hit(found[r.id]) if r.id in found else Hit(r, 1.0, ("pinned",)) for r in pinned]

    @staticmethod
    def _hit(item: _Scored) -> Hit:
        return Hit(
            record=item.record,
            score=item.rerank if item.rerank is not None else item.fused.score,
            paths=tuple(item.fused.ranks),
            ranks=dict(item.fused.ranks),
            path_scores=dict(item.fused.path_scores),
            fused_score=item.fused.score,
            rerank_score=item.rerank,
        )


def _dedupe(items: list[_Scored]) -> list[_Scored]:
    """Collapse records with the same text (a turn and the fact written from it).

    The better-ranked one stays; the paths and ranks of the other are merged into it.
    """
    kept: dict[str, _Scored] = {}
    for item in items:
        key = " ".join(item.record.content.casefold().split())
        first = kept.get(key)
        if first is None:
            kept[key] = item
            continue
        if item.record.pinned and not first.record.pinned:
            item.fused, first.fused = first.fused, item.fused
            kept[key] = item
            first = item
        for path, rank in item.fused.ranks.items():
            first.fused.ranks.setdefault(path, rank)
        for path, score in item.fused.path_scores.items():
            first.fused.path_scores.setdefault(path, score)
    return list(kept.values())
