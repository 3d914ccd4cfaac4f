"""Patterns: repeated observations become one record with a support count.

Five "Excel, not PDF" requests become one semantic pattern record ("support": 5,
provenance to all five). A repeat in a later dream makes a new pattern that carries the
earlier support on and supersedes the earlier pattern. Only observations worth keeping
(scored 4+) form patterns; repeated chatter is summarised like other chatter.

Two observations repeat each other when they carry exactly the same protected tokens
(numbers, names, brands, hard limits) and either read the same after normalisation,
fill the same slot, or embed close together *and* share a topic word. Requiring the
same protected tokens keeps "Excel" and "CSV" preferences apart and makes the pattern
pass the verbatim guard by construction; requiring a topic word keeps statements with
no protected token apart that a model embeds close only because they are short and in
one language (multilingual-e5 puts "我的导师是老陈。" and "我周末喜欢爬山。" above 0.8).

Superseded turns (``history``) count as support only when they restate one of the
pattern's observations by exact evidence (the same protected tokens and the same text
or slot), never through embeddings: an old value a newer one changed is not a repeat
of it. They are never the pattern's wording, nor shown to the LLM that phrases it. An
observation marked possibly outdated stays out of patterns, for recall and the dream's
LLM to judge (:mod:`dreammem.write.relations`).

Without an LLM the pattern's text is its newest active observation, verbatim. With
an LLM the pattern is phrased as a generalisation, unless it carries a hard limit
(those are never rephrased); an LLM phrasing that fails the guard falls back to the
verbatim text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from dreammem.config import DreamConfig
from dreammem.dream.context import DreamContext
from dreammem.dream.guard import protected_tokens
from dreammem.dream.llm_calls import StructuredLLM, build_prompt
from dreammem.dream.replacement import Replacement, distilled_record, guarded, normalize_text
from dreammem.dream.score import Scored
from dreammem.errors import LLMError
from dreammem.text.vocabulary import HARD_LIMITS
from dreammem.types import Kind, Layer, MemoryRecord, Role
from dreammem.write.relations import possibly_outdated_by
from dreammem.write.rules import detect_explicit
from dreammem.write.statements import analyse

__all__ = ["MIN_SCORE", "Embed", "cluster_observations", "find_patterns", "observed_text"]

MIN_SCORE = 4
"""Only user observations scored this high (explicit statements, facts, limits) form patterns."""


Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
"""Texts -> unit vectors (the store's embedder)."""


@dataclass(slots=True)
class _Cluster:
    tokens: frozenset[str]
    slot: str | None
    norm: str
    anchor: str
    members: list[MemoryRecord] = field(default_factory=list)


def _slot(record: MemoryRecord) -> str | None:
    explicit = detect_explicit(observed_text(record))
    return explicit.slot if explicit is not None else None


def observed_text(record: MemoryRecord) -> str:
    """What a record observed: a pattern's verbatim observation, else its content."""
    if record.kind is Kind.PATTERN:
        value = record.system.get("observation")
        if isinstance(value, str):
            return value
    return record.content


def cluster_observations(
    records: Sequence[MemoryRecord], embed: Embed | None, similarity: float
) -> list[list[MemoryRecord]]:
    """Group records that repeat each other, oldest first inside each group.

    First by exact evidence (same protected tokens and the same normalised text or
    slot); then clusters that share protected tokens are joined when their first
    observations embed at ``similarity`` or closer and share a topic word. Only those
    first observations are embedded, in one batch, so a dream embeds little.
    """
    clusters: list[_Cluster] = []
    for record in sorted(records, key=lambda r: (r.event_time, r.created_at)):
        cluster = _restated(clusters, record)
        if cluster is not None:
            cluster.members.append(record)
        else:
            text = observed_text(record)
            clusters.append(
                _Cluster(
                    frozenset(protected_tokens(text)), _slot(record), normalize_text(text), text, [record]
                )
            )
    if embed is not None:
        clusters = _join_similar(clusters, embed, similarity)
    return [sorted(c.members, key=lambda r: (r.event_time, r.created_at)) for c in clusters]


def _restated(clusters: Sequence[_Cluster], record: MemoryRecord) -> _Cluster | None:
    """The first cluster ``record`` restates by exact evidence (same tokens; same text or slot)."""
    text = observed_text(record)
    tokens = frozenset(protected_tokens(text))
    slot, norm = _slot(record), normalize_text(text)
    for cluster in clusters:
        if cluster.tokens == tokens and (norm == cluster.norm or (slot is not None and slot == cluster.slot)):
            return cluster
    return None


def _join_similar(clusters: list[_Cluster], embed: Embed, similarity: float) -> list[_Cluster]:
    by_tokens: dict[frozenset[str], list[int]] = {}
    for n, cluster in enumerate(clusters):
        by_tokens.setdefault(cluster.tokens, []).append(n)
    candidates = [n for group in by_tokens.values() if len(group) > 1 for n in group]
    if not candidates:
        return clusters
    vectors = dict(zip(candidates, embed([clusters[n].anchor for n in candidates]), strict=True))
    merged_into: dict[int, int] = {}
    for group in by_tokens.values():
        for position, n in enumerate(group):
            if n in merged_into:
                continue
            for m in group[position + 1 :]:
                if (
                    m not in merged_into
                    and float(np.dot(vectors[n], vectors[m])) >= similarity
                    and analyse(clusters[n].anchor).topics & analyse(clusters[m].anchor).topics
                ):
                    merged_into[m] = n
                    clusters[n].members.extend(clusters[m].members)
    return [c for n, c in enumerate(clusters) if n not in merged_into]


class _PatternItem(BaseModel):
    id: str
    pattern: str


class _PatternAnswer(BaseModel):
    patterns: list[_PatternItem]


_INSTRUCTIONS = (
    "Each group holds observations this user repeated. For each group write one short "
    "sentence stating the stable pattern (e.g. 'Prefers Excel reports over PDF'). Copy every "
    "name, brand, number, date and limit word verbatim; add no new numbers."
)


def find_patterns(
    candidates: Sequence[Scored],
    history: Sequence[MemoryRecord],
    *,
    existing: Sequence[MemoryRecord] = (),
    embed: Embed | None,
    config: DreamConfig,
    llm: StructuredLLM | None,
    context: DreamContext,
    now: datetime,
    dream_id: str,
) -> tuple[list[Replacement], list[str]]:
    """Pattern records for repeated user observations.

    Args:
        candidates: Scored active queued records; user turns scored 4+ (explicit
            statements, facts, hard limits) take part.
        history: Queued user turns already superseded; those that restate an
            observation by exact evidence count as support but are left as they are.
        existing: Active pattern records from earlier dreams: a repeat of one of them
            makes a new pattern that carries its support on and supersedes it.
        embed: Embeds observations for similarity (None: exact evidence only).
        config: Thresholds.
        llm: Phrases patterns when given.
        context: Anchors the LLM.
        now: Creation time of the pattern records.
        dream_id: Written into each pattern's system notes.

    Returns:
        The patterns and notes on anything that degraded.
    """
    scores = {
        s.record.id: s.score
        for s in candidates
        if s.score >= MIN_SCORE and s.record.role is Role.USER and not possibly_outdated_by(s.record)
    }
    active = [s.record for s in candidates if s.record.id in scores]
    groups = [
        g
        for g in _with_history(
            cluster_observations([*existing, *active], embed, config.pattern_similarity), history
        )
        if any(r.id in scores for r in g) and sum(_support(r) for r in g) >= config.pattern_min_support
    ]
    notes: list[str] = []
    past = {r.id for r in history}
    current = [[r for r in g if r.id not in past] for g in groups]
    phrased = _phrase(current, llm, context, notes) if llm is not None else {}
    patterns: list[Replacement] = []
    for n, group in enumerate(groups):
        newest_active = [r for r in group if r.id in scores][-1]
        content = newest_active.content
        proposal = phrased.get(n)
        if proposal is not None:
            ok, _, invented = guarded(proposal, group, "pattern")
            if len(ok) == len(group):
                content = proposal
            else:
                why = f"invents {list(invented)}" if invented else "loses protected tokens"
                notes.append(f"pattern {n + 1}: LLM phrasing {why}; kept the verbatim observation")
        explicit = [e for e in (detect_explicit(r.content) for r in group) if e is not None]
        record = distilled_record(
            content,
            group,
            layer=Layer.SEMANTIC,
            kind=Kind.PATTERN,
            importance=max([scores.get(r.id, r.importance if r.kind is Kind.PATTERN else 4) for r in group]),
            now=now,
            system={
                "support": sum(_support(r) for r in group),
                "observation": newest_active.content,
                "dream_id": dream_id,
                "of_kind": explicit[-1].kind.value if explicit else "observation",
            },
            slot=_slot(newest_active),
            pinned=any(e.pinned for e in explicit) or any(r.pinned for r in group),
        )
        replaces = tuple(r for r in group if r.id in scores)
        patterns.append(Replacement(record, replaces, tuple(group)))
    return patterns, notes


def _with_history(
    groups: list[list[MemoryRecord]], history: Sequence[MemoryRecord]
) -> list[list[MemoryRecord]]:
    """Each superseded turn added to the group it restates by exact evidence (else left out)."""
    for record in history:
        for group in groups:
            members = [
                _Cluster(frozenset(protected_tokens(t)), _slot(m), normalize_text(t), t, [m])
                for m in group
                for t in [observed_text(m)]
            ]
            if _restated(members, record) is not None:
                group.append(record)
                group.sort(key=lambda r: (r.event_time, r.created_at))
                break
    return groups


def _support(record: MemoryRecord) -> int:
    """How many observations a record stands for (a pattern: its support)."""
    if record.kind is Kind.PATTERN:
        value = record.system.get("support", 1)
        return value if isinstance(value, int) and value > 0 else 1
    return 1


def _phrase(
    groups: list[list[MemoryRecord]], llm: StructuredLLM, context: DreamContext, notes: list[str]
) -> dict[int, str]:
    """LLM phrasings by group index, for groups without hard limits."""
    hard = set(HARD_LIMITS)
    askable = [n for n, g in enumerate(groups) if not hard & set(protected_tokens(g[-1].content))]
    if not askable:
        return {}
    payload = {
        "groups": [{"id": f"p{n + 1}", "observations": [r.content for r in groups[n]][-6:]} for n in askable]
    }
    prompt = build_prompt(
        "patterns", _INSTRUCTIONS, context.render(), payload, '{"patterns": [{"id": "p1", "pattern": "..."}]}'
    )
    try:
        answer = llm.ask(prompt, _PatternAnswer, label="patterns")
    except LLMError as exc:
        notes.append(f"patterns: {exc}; verbatim observations used")
        return {}
    wanted = {f"p{n + 1}": n for n in askable}
    out = {
        wanted[item.id]: " ".join(item.pattern.split())
        for item in answer.patterns
        if item.id in wanted and item.pattern.strip()
    }
    if len(out) < len(answer.patterns):
        notes.append(f"patterns: {len(answer.patterns) - len(out)} unknown or empty answers ignored")
    return out
