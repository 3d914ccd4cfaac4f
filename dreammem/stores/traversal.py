"""Graph traversal and scoring, shared by every graph backend.

A backend supplies four read primitives (:class:`~dreammem.stores.base.GraphStore`);
this module walks them the same way for all, so the embedded graph and Neo4j rank
alike::

    seeds (query entity keys the user's graph knows, hubs dropped)
      -> hop 1: memories mentioning a seed          score = sum of seed weights
      -> bridges: other entities of hop-1 memories, and entities related to a seed
      -> hop 2: memories mentioning a bridge        score = HOP2_DISCOUNT * best w(seed) * w(bridge)
         (the rarest bridges first, each contributing at most ``limit`` newest memories;
         the walk stops reading bridges once no rarer-first bridge left can reach the top ``limit``)

An entity's weight is its normalised inverse document frequency,
``log(1 + N / df) / log(1 + N)``: 1 for an entity only one memory mentions, near 0 for
one that every memory mentions. A hop-2 path through a seed therefore scores below
a hop-1 match on the same seed. Hub entities (the user's own name, a speaker tag)
mention a large share of memories: they carry almost no information and would flood
the walk, so they neither seed nor bridge it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dreammem.errors import ValidationError
from dreammem.stores.capabilities import GraphCapability

if TYPE_CHECKING:
    from dreammem.stores.graph_base import GraphStore

__all__ = ["GraphNeighbor", "TraversalLimits", "entity_weight", "is_hub", "traverse"]

HOP2_DISCOUNT = 0.5
"""How much less a 2-hop path counts than a 1-hop match through the same seed."""


@dataclass(frozen=True, slots=True)
class GraphNeighbor:
    """A memory reached from query entities: how many hops away, its score, and the path.

    ``via`` is the entity path that reached it: ``(seed,)`` for one hop,
    ``(seed, bridge)`` for two.
    """

    memory_id: str
    hops: int
    score: float
    via: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class TraversalLimits:
    """Bounds that keep a walk cheap on large graphs.

    Attributes:
        per_entity: Memories fetched per seed or bridge (newest first).
        max_bridges: Bridges walked in hop 2 (the rarest first).
        hub_fraction: An entity mentioned by more than this share of the user's
            memories is a hub ...
        hub_min: ... once it is mentioned by more than this many memories.
        bridge_sources: Hop-1 memories (the best first) whose entities are read as
            bridges; reading every entity of hundreds of hop-1 memories cost ~20 ms
            per query at 100k memories (docs/BENCHMARKS.md, recall latency).
    """

    per_entity: int = 200
    max_bridges: int = 24
    bridge_sources: int = 64
    hub_fraction: float = 0.1
    hub_min: int = 50


DEFAULT_LIMITS = TraversalLimits()


def entity_weight(df: int, total: int) -> float:
    """Normalised IDF in (0, 1]: how informative a match on this entity is."""
    if df <= 0 or total <= 1:
        return 1.0
    return math.log1p(total / df) / math.log1p(total)


def is_hub(df: int, total: int, limits: TraversalLimits = DEFAULT_LIMITS) -> bool:
    """True when an entity is mentioned too often to guide a walk."""
    return df > max(limits.hub_min, limits.hub_fraction * total)


def _dedupe(keys: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(k for k in keys if k))


def traverse(
    graph: GraphStore,
    user_id: str,
    entity_keys: Sequence[str],
    *,
    hops: int = 2,
    limit: int = 30,
    limits: TraversalLimits = DEFAULT_LIMITS,
) -> list[GraphNeighbor]:
    """Walk 1-2 hops from the query entities to memories, best first.

    Ties are broken by the order the backend lists a key's memories in (newest event
    time, then newest record: :meth:`GraphStore.memories_of`), never by the random
    memory ids, so every backend, and every store of the same memories, ranks alike.
    """
    if hops not in (1, 2):
        raise ValidationError(f"hops must be 1 or 2, got {hops!r}")
    keys = _dedupe(entity_keys)
    if not keys or limit <= 0:
        return []
    total, df = graph.entity_stats(user_id, keys)
    seeds = {k: entity_weight(df[k], total) for k in keys if k in df and not is_hub(df[k], total, limits)}
    if not seeds:
        return []

    found: dict[str, tuple[int, float, tuple[str, ...], int]] = {}  # id -> hops, score, via, order
    order = 0
    for key, memory_id in graph.memories_of(user_id, list(seeds), per_entity=limits.per_entity):
        _, score, via, first = found.get(memory_id, (1, 0.0, (key,), order))
        found[memory_id] = (1, score + seeds[key], via, first)
        order += 1

    if hops == 2 and _hop2_may_rank(found, seeds, limit):
        best = sorted(found, key=lambda m: (-found[m][1], found[m][3]))[: limits.bridge_sources]
        hop1 = {memory_id: score for memory_id, (_, score, _, _) in found.items()}
        hop2 = _hop2(graph, user_id, seeds, hop1, best, total, limits, limit)
        for memory_id, (via, score) in hop2.items():
            found[memory_id] = (2, score, via, order)
            order += 1
    ranked = sorted(found.items(), key=lambda kv: (-kv[1][1], kv[1][3], kv[0]))
    return [GraphNeighbor(memory_id, h, round(s, 6), via) for memory_id, (h, s, via, _) in ranked[:limit]]


def _hop2_may_rank(
    found: dict[str, tuple[int, float, tuple[str, ...], int]], seeds: dict[str, float], limit: int
) -> bool:
    """False when no 2-hop memory can enter the top ``limit``: hop 1 alone fills it.

    A 2-hop score is ``HOP2_DISCOUNT * w(seed) * w(bridge)`` with weights at most 1, so
    never above ``HOP2_DISCOUNT`` times the best seed weight, and a 2-hop memory ranks
    after a 1-hop one of equal score (it is reached later). When ``limit`` 1-hop memories
    score at least that much, the walk's answer is theirs: hop 2's reads (most of a
    2-hop walk's time) are skipped.
    """
    ceiling = HOP2_DISCOUNT * max(seeds.values())
    return sum(1 for _, score, _, _ in found.values() if score >= ceiling) < limit


def _hop2(
    graph: GraphStore,
    user_id: str,
    seeds: dict[str, float],
    hop1: dict[str, float],
    sources: Sequence[str],
    total: int,
    limits: TraversalLimits,
    limit: int,
) -> dict[str, tuple[tuple[str, str], float]]:
    """Memories two hops away (not reached by hop 1): ``id -> ((seed, bridge), score)``.

    Bridges are the entities of the ``sources`` (the best hop-1 memories); ``hop1`` holds
    the hop-1 memories and their scores.

    A bridge contributes at most ``limit`` memories: its score is the same for all
    of them, so only its newest can make the final top ``limit``. Bridges are read
    best first, a weight level at a time (:func:`_batches`), and the reads stop once
    ``limit`` memories score at least the next level's score (:func:`_settled`): a
    memory found later would score no more and be reached later, so it would rank
    below all of them and the walk's answer is the same as reading every bridge.
    """
    # bridge key -> (best seed weight leading to it, that seed)
    bridges: dict[str, tuple[float, str]] = {}

    def offer(bridge: str, seed: str) -> None:
        if bridge not in seeds and (seeds[seed], seed) > bridges.get(bridge, (-1.0, "")):
            bridges[bridge] = (seeds[seed], seed)

    for entities in graph.entities_of(user_id, sorted(sources)).values():
        keys = [e.key for e in entities]
        for seed in (k for k in keys if k in seeds):
            for bridge in keys:
                offer(bridge, seed)
    if GraphCapability.RELATIONS in graph.capabilities:
        for key, _, other in graph.related(user_id, list(seeds)):
            if key in seeds:
                offer(other, key)
    if not bridges:
        return {}
    _, bridge_df = graph.entity_stats(user_id, list(bridges))
    weights = {
        b: bridges[b][0] * entity_weight(d, total)
        for b, d in bridge_df.items()
        if not is_hub(d, total, limits)
    }
    chosen = sorted(weights, key=lambda b: (-weights[b], b))[: limits.max_bridges]
    out: dict[str, tuple[tuple[str, str], float]] = {}
    fanout = min(limits.per_entity, limit)
    scores = list(hop1.values())
    most = {b: min(bridge_df[b], fanout) for b in chosen}
    levels = _levels(chosen, weights)
    start = 0
    while start < len(levels) and not _settled(scores, len(out), HOP2_DISCOUNT * levels[start][0], limit):
        end = _batches(levels, start, scores, len(out), most, limit)
        batch = [bridge for _, keys in levels[start:end] for bridge in keys]
        start = end
        for bridge, memory_id in graph.memories_of(user_id, batch, per_entity=fanout):
            if memory_id in hop1:
                continue
            score = HOP2_DISCOUNT * weights[bridge]
            if memory_id not in out or score > out[memory_id][1]:
                out[memory_id] = ((bridges[bridge][1], bridge), score)
    return out


def _levels(chosen: Sequence[str], weights: dict[str, float]) -> list[tuple[float, list[str]]]:
    """The chosen bridges (best first) in runs of equal weight: ``(weight, bridges)``."""
    levels: list[tuple[float, list[str]]] = []
    for bridge in chosen:
        if levels and levels[-1][0] == weights[bridge]:
            levels[-1][1].append(bridge)
        else:
            levels.append((weights[bridge], [bridge]))
    return levels


def _settled(hop1: Sequence[float], found: int, score: float, limit: int) -> bool:
    """Whether ``limit`` memories score at least ``score``.

    They are the hop-1 ones that do (scores ``hop1``) and the ``found`` hop-2 ones (all
    read from bridges at least as good).
    """
    return found + sum(1 for s in hop1 if s >= score) >= limit


def _batches(
    levels: Sequence[tuple[float, Sequence[str]]],
    start: int,
    hop1: Sequence[float],
    found: int,
    most: dict[str, int],
    limit: int,
) -> int:
    """Where the next read of bridges ends: the levels from ``start`` that may settle the walk.

    ``most`` is the most memories a bridge may add (its mentions, at most the fan-out). A
    read takes the next level and the following ones while even that many new memories
    could not settle the walk before the level after them (one read instead of several
    that could not stop it, which matters to a store that answers each read remotely).
    """
    room = 0
    end = start
    while end < len(levels):
        room += sum(most[b] for b in levels[end][1])
        end += 1
        if end == len(levels) or _settled(hop1, found + room, HOP2_DISCOUNT * levels[end][0], limit):
            return end
    return end
