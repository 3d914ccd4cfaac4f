"""The recall pipeline: embed, run paths, fuse, rerank, decay, floors, order, trace.

::

    query -> [text-only paths] -> embed once -> [other paths] (each scoped to the user)
          -> reciprocal rank fusion
          (a stand-in path takes the place of the one it answers for, dreammem.recall.fusion)
          -> load (filler and tool echoes left out) + dedupe -> reranker over the top
          candidates, its rank fused with the first-stage rank (without a reranker: the
          learned rank, dreammem.recall.learned_rank) -> time decay (episodic)
          -> per-layer floors -> relevance floor (a current value or a summary inherits
          the relevance of what it superseded or condensed) -> by score, newest first among equal
          scores -> the current value before an earlier one it may replace (marked)
          -> at most k hits, core (pinned) memories from their budget -> touch

The paths that read only the query's text (keyword, graph: :mod:`dreammem.recall.recipe`) run while the
query is embedded, the keyword search on a helper thread when the process has a second CPU
(:mod:`dreammem.recall.beside`), else all of them just before it; on the helper thread the
other paths then read what they need of the text alone (``prepare``: the temporal path's
window), while the caller runs the vector search and then the graph path (none of the three
reads another's candidates). Every
path still sees the candidates of the paths before it in the configured order, so the
results are those of running them in the recipe's order (:func:`~dreammem.recall.recipe.run_order`),
whatever order the configuration lists them in. Their stage timings overlap the ``embed`` stage.

``recall(k)`` returns at most ``k`` hits. Pinned (core) memories rank like any other
memory; those that did not rank are added after the ranked hits from a budget of
``RecallConfig.pinned_max_count`` memories and ``pinned_max_tokens`` tokens, taking the
last ranked slots (one ranked hit always stays when there is one). See
:mod:`dreammem.recall.budget`.

Scores are explained in :mod:`dreammem.recall.scoring`. A path, the embedding, the
reranker or the access bookkeeping that raises is a documented degradation
boundary: it drops out with a warning, is listed in ``RecallResult.degraded``, and
recall still answers from what is left (no essential path left: its typed error is raised).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Protocol

from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.errors import ConfigError, ValidationError
from dreammem.recall.base import Candidate, RecallPath, RecallQuery, SearchMemo, neighbour_seeds
from dreammem.recall.beside import BesideEncoder, held_by_caller, spare_cpu
from dreammem.recall.budget import CORE_PATHS, with_core_memories, worth_recalling
from dreammem.recall.current import current_first, newer_ids
from dreammem.recall.fusion import reciprocal_rank_fusion, stand_ins
from dreammem.recall.learned_rank import CandidateRanker, packaged_model
from dreammem.recall.on_topic import on_topic
from dreammem.recall.path_runs import StageClock, prepare_paths, run_paths
from dreammem.recall.recipe import (
    PATHS,
    PathSpec,
    essential_paths,
    later_stage,
    measures_similarity,
    reads_embedding_only,
    reads_text_only,
    run_order,
    stand_ins_for,
)
from dreammem.recall.relevance import RelevanceJudge
from dreammem.recall.result import Hit, RecallResult
from dreammem.recall.scored import Scored, dedupe
from dreammem.recall.scoring import (
    decay_factor,
    fusion_ceiling,
    passes_floor,
    rank_order,
    rerank_score,
)
from dreammem.stores.base import RecordCapability, RecordStore
from dreammem.types import MemoryRecord

__all__ = ["RecallPipeline", "Reranker"]

log = logging.getLogger(__name__)


class Reranker(Protocol):
    """Scores (query, memory text) pairs; higher means more relevant."""

    name: str

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text."""
        ...


class RecallPipeline:
    """Runs the configured paths and stages for one store.

    Args:
        store: The record store (loads the records behind candidate row ids).
        paths: The recall paths by name.
        config: Pipeline settings.
        reranker: Optional cross-encoder stage.
        embedder: Embeds the query once for every path (skipped when the query
            already carries an embedding).
        beside: Run the text-only paths on a helper thread while the query is embedded
            (:mod:`dreammem.recall.beside`); ``None``: when the process may use a second CPU.
        specs: What each path is (:data:`dreammem.recall.recipe.PATHS`, the default); a
            path without a spec never runs.
        learned: With ``RecallConfig.learned_rank``, the model that reorders the fused
            candidates (:mod:`dreammem.recall.learned_rank`); ``None``: the shipped one.

    Raises:
        ConfigError: the configuration runs a path that is not in ``paths`` (it would
            recall nothing, silently).
    """

    def __init__(
        self,
        store: RecordStore,
        paths: Mapping[str, RecallPath],
        config: RecallConfig,
        reranker: Reranker | None = None,
        embedder: Embedder | None = None,
        *,
        beside: bool | None = None,
        specs: Mapping[str, PathSpec] = PATHS,
        learned: CandidateRanker | None = None,
    ) -> None:
        if unknown := sorted(set(config.active_paths) - set(paths)):
            raise ConfigError(f"unknown recall paths {unknown} in the config; available: {sorted(paths)}")
        self._store = store
        self.paths = dict(paths)
        self.config = config
        self.reranker = reranker
        self.embedder = embedder
        self.specs = specs
        self.learned = learned
        self._beside = BesideEncoder() if (spare_cpu() if beside is None else beside) else None

    @property
    def beside_encoder(self) -> bool:
        """Whether the text-only paths run on a helper thread while the query is embedded."""
        return self._beside is not None

    def run(self, query: RecallQuery, k: int, *, paths: Sequence[str] | None = None) -> RecallResult:
        """Recall at most ``k`` memories for the query (core memories from their budget).

        Raises:
            ValidationError: ``paths`` names a path this pipeline does not have.
        """
        clock = StageClock()
        degraded: dict[str, str] = {}
        if paths is not None and (unknown := sorted(set(paths) - set(self.paths))):
            raise ValidationError(f"unknown recall paths {unknown}; available: {sorted(self.paths)}")
        wanted = paths if paths is not None else self.config.active_paths
        names = run_order((n for n in wanted if n in self.paths), self.specs)
        query = dataclasses.replace(query, searches=SearchMemo())  # shared by this run's paths only
        # Paths that read only the query's text run beside the encoder (or first, on one CPU).
        early = [n for n in names if reads_text_only(n, self.specs)]
        first, query, ran = self._text_paths_and_embedding(query, names, early, clock, degraded)
        done = {n: first.get(n) for n in ran}
        essential = essential_paths(names, self.specs)
        later = later_stage(names, self.specs)
        first_stage = [n for n in names if n not in later]
        ranked = run_paths(self.paths, query, first_stage, clock, degraded, done, essential=essential)
        if later:
            self._gather(query, ranked, later, clock, degraded)
            done = {n: ranked.get(n) for n in first_stage}
            ranked = run_paths(self.paths, query, names, clock, degraded, done, essential=essential)
        # A path that claims the query answers alone (see Candidate.sole).
        claimed = {name: found for name, found in ranked.items() if found and found[0].sole}
        ranked = claimed or ranked
        scored = self._candidates(query, ranked, k, clock)
        if self.reranker is not None and scored:
            start = time.perf_counter()
            self._rerank(query, scored, degraded)
            clock.lap("rerank", start)
        # -- the learned rank stage (issue 33): a model over the candidates' features reorders
        # them; one reorder stage only, so a configured cross-encoder takes its place --
        elif self.config.learned_rank and scored:
            start = time.perf_counter()
            self._learned_rank(query, scored, degraded)
            clock.lap("learned_rank", start)
        start = time.perf_counter()
        judge = RelevanceJudge(self._store, self.config, self.embedder, self.specs)  # as configured now
        kept = judge.relevant(query, self._finish(query, scored), ranked, sole=bool(claimed))
        kept = kept if claimed else [s for s in kept if s.fused.timed or on_topic(query.text, s.record)]
        twin_marks = {s.record.id: newer_ids([Hit(t, 0.0, ()) for t in s.twins]) for s in kept if s.twins}
        aliases = {t.id: s.record.id for s in kept for t in s.twins}
        ranked_hits = current_first(
            [self._hit(s) for s in kept], lambda ids: self._records(query, ids), twin_marks, aliases, shown=k
        )
        core = self._pinned(query, {h.id for h in ranked_hits}, degraded)
        ordered = tuple(with_core_memories(ranked_hits, core, k=k, config=self.config))
        clock.lap("order", start)
        start = time.perf_counter()
        try:
            self._store.touch_soon(query.user_id, [h.id for h in ordered], query.now)
        except Exception as exc:  # degradation boundary: bookkeeping must not lose the answer
            log.warning("recording access failed: %s", exc)
            degraded["touch"] = f"{type(exc).__name__}: {exc}"
        clock.lap("touch", start)
        clock.total()
        return RecallResult(
            query=query.text,
            user_id=query.user_id,
            hits=ordered,
            degraded=degraded,
            timings_ms=clock.timings,
            budget_tokens=self.config.budget_tokens,
        )

    # -- stages ----------------------------------------------------------------------------

    def _text_paths_and_embedding(
        self,
        query: RecallQuery,
        names: Sequence[str],
        early: Sequence[str],
        clock: StageClock,
        degraded: dict[str, str],
    ) -> tuple[dict[str, list[Candidate]], RecallQuery, list[str]]:
        """The text-only paths' candidates, the query with its embedding, and the paths that ran.

        With a helper thread, the text-only paths that search an index (keyword) run on it
        while the caller embeds the query: their SQLite statements and the encoder's BLAS
        calls release the GIL, so they overlap. The caller then runs the first-stage paths
        that read only the embedding (vector), then the other text-only paths (graph), while
        the helper may still be searching: none of them reads another path's candidates, so
        each finds what it finds in the recipe's order (on Neo4j their round trips overlap).
        """
        if self._beside is None or not early or not self._embeds(query, names) or held_by_caller(self._store):
            first = run_paths(self.paths, query, early, clock, degraded)
            return first, self._embed(query, names, clock, degraded), list(early)
        side_clock, side_degraded = StageClock(), dict[str, str]()
        searching = [n for n in early if self.specs[n].index] or list(early)
        alongside = [n for n in names if n not in early and reads_embedding_only(n, self.specs)]
        alongside += [n for n in early if n not in searching]

        def beside() -> dict[str, list[Candidate]]:
            found = run_paths(self.paths, query, searching, side_clock, side_degraded)
            prepare_paths(self.paths, query, [n for n in names if n not in early], side_clock)
            return found

        def here() -> tuple[RecallQuery, dict[str, list[Candidate]]]:
            embedded = self._embed(query, names, clock, degraded)
            return embedded, run_paths(self.paths, embedded, alongside, clock, degraded)

        first, (query, nearest) = self._beside.run(beside, here)
        clock.timings.update(side_clock.timings)
        degraded.update(side_degraded)
        clock.failed.update(side_clock.failed)
        return {**first, **nearest}, query, [*searching, *alongside]

    def _gather(
        self,
        query: RecallQuery,
        ranked: Mapping[str, Sequence[Candidate]],
        later: Sequence[str],
        clock: StageClock,
        degraded: dict[str, str],
    ) -> None:
        """Read ahead, at once, what recall reads about the first stage's candidates.

        Only from a store that declares ``GATHERED_READS`` (each of its reads is a round trip);
        the later reads then answer from what was read (``query.searches``).
        """
        if RecordCapability.GATHERED_READS not in self._store.capabilities:
            return
        start = time.perf_counter()
        seen = dataclasses.replace(query, earlier=dict(ranked))
        rowids = [c.rowid for found in ranked.values() for c in found]
        readers = [r for n in later if (r := neighbour_seeds(self.paths[n])) is not None]
        try:
            seeds = [rowid for reader in readers for rowid in reader(seen)]
            found = self._store.surroundings(
                query.user_id, rowids, seeds, pinned=self.config.pinned_max_count != 0
            )
            query.searches.gather(found)
        except Exception as exc:  # the reads then ask the store one by one, each in its own boundary
            log.warning("reading the candidates' surroundings failed: %s", exc)
        clock.lap("gather", start)

    def _embeds(self, query: RecallQuery, names: Sequence[str]) -> bool:
        """Whether this recall embeds the query (a path measuring similarity runs; none came with it)."""
        return (
            query.embedding is None and self.embedder is not None and measures_similarity(names, self.specs)
        )

    def _embed(
        self, query: RecallQuery, names: Sequence[str], clock: StageClock, degraded: dict[str, str]
    ) -> RecallQuery:
        if self.embedder is None or not self._embeds(query, names):
            return query
        start = time.perf_counter()
        try:
            vector = self.embedder.embed_query(query.text)
        except Exception as exc:  # degradation boundary: paths without vectors still answer
            log.warning("query embedding failed: %s", exc)
            degraded["embed"] = f"{type(exc).__name__}: {exc}"
            return query
        finally:
            clock.lap("embed", start)
        return dataclasses.replace(query, embedding=vector)

    def _candidates(
        self, query: RecallQuery, ranked: Mapping[str, list[Candidate]], k: int, clock: StageClock
    ) -> list[Scored]:
        """Fuse, load the top records (active, this user's only), dedupe, score 0..1."""
        start = time.perf_counter()
        rrf_k = self.config.rrf_k
        weights = {name: self.config.weight(name) for name in ranked}
        fusing = stand_ins(ranked, weights, stand_ins_for(ranked, self.specs))
        fused = reciprocal_rank_fusion(fusing, k=rrf_k, weights=weights)
        wanted = max(self.config.rerank_top, k)
        top = fused[:wanted] if query.filter is None else fused
        clock.lap("fuse", start)
        start = time.perf_counter()
        records = query.searches.records(self._store, query.user_id, [f.rowid for f in top])
        if query.filter is not None:  # filtered before the cut, so k matching memories can fill it
            keep = query.filter.matches
            top = [f for f in top if f.rowid in records and keep(records[f.rowid])][:wanted]
        clock.lap("load", start)
        scored = dedupe(
            [
                Scored(f, records[f.rowid])
                for f in top
                if f.rowid in records and records[f.rowid].is_active and worth_recalling(records[f.rowid])
            ]
        )
        ceiling = fusion_ceiling({p: len(c) for p, c in fusing.items()}, k=rrf_k, weights=weights)
        for rank, item in enumerate(scored, 1):
            item.fused_rank = rank
            item.score = min(1.0, item.fused.score / ceiling)
        return scored

    def _rerank(self, query: RecallQuery, scored: list[Scored], degraded: dict[str, str]) -> None:
        assert self.reranker is not None
        head = scored[: self.config.rerank_top]
        try:
            values = self.reranker.score(query.text, [s.record.content for s in head])
            if len(values) != len(head):
                raise ValueError(f"reranker returned {len(values)} scores for {len(head)} texts")
        except Exception as exc:  # degradation boundary: keep the first-stage order
            log.warning("reranker %s failed: %s", self.reranker.name, exc)
            degraded["rerank"] = f"{type(exc).__name__}: {exc}"
            return
        for item, value, rank in zip(head, values, rank_order([float(v) for v in values]), strict=True):
            item.rerank, item.rerank_rank = float(value), rank
        for item in scored:
            item.score = rerank_score(
                item.fused_rank,
                item.rerank_rank,
                k=self.config.rrf_k,
                blend=self.config.rerank_blend,
                weight=self.config.rerank_weight,
            )

    def _learned_rank(self, query: RecallQuery, scored: list[Scored], degraded: dict[str, str]) -> None:
        """Scores from the learned rank model (a degradation boundary: the fused order stays)."""
        try:
            ranker = self.learned if self.learned is not None else packaged_model()
            ranker.order(query, scored, self.config)
        except Exception as exc:  # degradation boundary: keep the first-stage order
            log.warning("learned rank failed: %s", exc)
            degraded["learned_rank"] = f"{type(exc).__name__}: {exc}"

    def _finish(self, query: RecallQuery, scored: list[Scored]) -> list[Scored]:
        """Decay, per-layer floors, then order: score, newest first among equal scores."""
        half_life = self.config.episodic_half_life_days
        kept = []
        for item in scored:
            item.decay = decay_factor(item.record, query.now, half_life)
            item.score *= item.decay
            # A record that fails its layer's floor may have a same-text twin of another layer.
            passing = [r for r in (item.record, *item.twins) if passes_floor(r, item.score, self.config)]
            if passing:
                item.record = passing[0]
                kept.append(item)
        kept.sort(key=lambda s: (-round(s.score, 12), -s.record.event_time.timestamp(), s.fused_rank))
        return kept

    def _records(self, query: RecallQuery, ids: Sequence[str]) -> dict[str, MemoryRecord]:
        """The user's records by id (the newer versions older hits point at) that match the filter."""
        found = query.searches.by_ids(self._store, query.user_id, list(ids))
        return {r.id: r for r in found if query.filter is None or query.filter.matches(r)}

    def _pinned(self, query: RecallQuery, ranked: set[str], degraded: dict[str, str]) -> list[Hit]:
        """The user's pinned memories that did not rank (and match the filter), newest first."""
        if self.config.pinned_max_count == 0:
            return []
        try:
            pinned = query.searches.pinned(self._store, query.user_id)  # newest first
            if query.filter is not None:
                pinned = [r for r in pinned if query.filter.matches(r)]
        except Exception as exc:  # degradation boundary: ranked hits still answer
            log.warning("loading pinned memories failed: %s", exc)
            degraded["pinned"] = f"{type(exc).__name__}: {exc}"
            return []
        return [Hit(r, 1.0, CORE_PATHS) for r in pinned if r.id not in ranked]

    @staticmethod
    def _hit(item: Scored) -> Hit:
        return Hit(
            record=item.record,
            score=item.score,
            paths=tuple(item.fused.ranks),
            ranks=dict(item.fused.ranks),
            path_scores=dict(item.fused.path_scores),
            fused_score=item.fused.score,
            fused_rank=item.fused_rank,
            rerank_score=item.rerank,
            rerank_rank=item.rerank_rank,
            decay=item.decay,
            timed=item.fused.timed,
        )
