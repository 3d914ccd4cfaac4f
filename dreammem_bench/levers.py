"""Recall levers measured by leave-one-conversation-out (``dreammem bench locomo --loco --levers``).

A lever is an extra recall path fused with the shipped ones. Each runs once per
question (its candidates are cached like the shipped paths'); the grid is every
combination of lever weights (0 = the lever off, also a lever the shipped config runs,
such as ``person``: it is taken out), the shipped fusion otherwise. Folds
then choose, per held-out conversation, among the settings of one *family*: a single
lever's weights (the others off), or every combination (with ``--depths``, each of
them at every depth: candidates per path). A lever earns its place when
its family's pooled held-out score beats the all-off setting's and no fold loses much.

Levers:

- ``graph_named``: the graph path seeded only from the entities the question names
  (:class:`~dreammem.recall.graph.GraphPath` with ``named_only``), 2 hops;
- ``speaker``: :class:`~dreammem.recall.speaker.SpeakerPath` (a question naming a
  speaker ranks that speaker's own lines among the other paths' candidates);
- ``naming``: :class:`~dreammem.recall.naming.NamingPath` (a question asking for a list of
  things votes for the other paths' candidates that name something);
- ``reply``: :class:`~dreammem.recall.reply.ReplyPath` (the previous and next turn of the
  session of the other paths' best turns: an answer is often the turn after its question);
- ``e5``: multilingual-e5-small as a second vector path beside the store's MiniLM: the
  library's :class:`~dreammem.recall.second_vector.SecondVectorPath` over the store's
  second index (the method's config sets ``embedding.second_model``; see
  :func:`with_second_model`).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dreammem.config import DreamMemConfig
from dreammem.recall.base import RecallPath
from dreammem.recall.graph import GraphPath
from dreammem.recall.recipe import PATHS, PathSpec
from dreammem_bench.loco import FusionSetting, LocoResult, Scores, held_out, score_settings
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import DreamMemMethod
from dreammem_bench.metrics import score_question

__all__ = [
    "LEVERS",
    "LeverRun",
    "LeverSetup",
    "families",
    "family_row",
    "first_hits",
    "lever_settings",
    "other_depths",
    "run_levers",
    "setup_levers",
    "with_second_model",
]

LEVERS = (
    "graph_named",
    "e5",
    "speaker",
    "naming",
    "person",
    "unnamed",
    "reply",
)
"""The levers ``--levers`` accepts."""


def with_second_model(config: DreamMemConfig, levers: Sequence[str]) -> DreamMemConfig:
    """``config`` with e5 as the store's second model when the ``e5`` lever is asked for."""
    if "e5" not in levers:
        return config
    return config.model_copy(update={"embedding": config.embedding.model_copy(update={"second_model": "e5"})})


@dataclass(frozen=True, slots=True)
class LeverSetup:
    """What the fold run needs for a set of levers.

    Attributes:
        paths: Paths to add to the pipeline for the run (levers the pipeline lacks).
        specs: What each of them is (:class:`~dreammem.recall.recipe.PathSpec`).
    """

    paths: Mapping[str, RecallPath]
    specs: Mapping[str, PathSpec]


def setup_levers(levers: Sequence[str], *, method: DreamMemMethod | None = None) -> LeverSetup:
    """The extra paths of these levers.

    Raises:
        ValueError: an unknown lever, ``graph_named`` without the method (whose graph
            it walks), or ``e5`` without a method whose store keeps a second index.
    """
    unknown = sorted(set(levers) - set(LEVERS))
    if unknown:
        raise ValueError(f"unknown levers {unknown}; known: {list(LEVERS)}")
    paths: dict[str, RecallPath] = {}
    specs: dict[str, PathSpec] = {}
    if "graph_named" in levers:
        if method is None:
            raise ValueError("the graph_named lever needs the method")
        paths["graph_named"] = GraphPath(method.memory.graph, method.memory.store, named_only=True)
        specs["graph_named"] = PathSpec(
            "graph_named", "the graph path from the named entities only", reads="text"
        )
    if "e5" in levers:
        library = None if method is None else method.memory.pipeline.paths.get("second_vector")
        if library is None:
            raise ValueError("the e5 lever needs a method whose config sets embedding.second_model")
        paths["e5"] = library
        specs["e5"] = dataclasses.replace(PATHS["second_vector"], name="e5")
    return LeverSetup(paths, specs)


def lever_settings(levers: Sequence[str], weights: Sequence[float]) -> list[tuple[tuple[str, float], ...]]:
    """Every combination of lever weights, all-off first (lever, weight) pairs, off levers omitted."""
    out: list[tuple[tuple[str, float], ...]] = []
    for combo in itertools.product(weights, repeat=len(levers)):
        chosen = tuple((lever, w) for lever, w in zip(levers, combo, strict=True) if w > 0)
        if chosen not in out:
            out.append(chosen)
    out.sort(key=len)
    return out


def families(
    settings: Sequence[tuple[tuple[str, float], ...]], levers: Sequence[str]
) -> dict[str, list[int]]:
    """Setting indices per family: each lever alone (with all-off) and every combination.

    The all-off setting (index 0) leads every family, so it is each family's baseline.
    """
    out = {
        lever: [i for i, s in enumerate(settings) if {name for name, _ in s} <= {lever}] for lever in levers
    }
    if len(levers) > 1:
        out["all"] = list(range(len(settings)))
    return out


@dataclass(slots=True)
class LeverRun:
    """Every lever setting's scores and, per family, the fold protocol over its settings."""

    settings: list[FusionSetting]
    scores: list[Scores]
    results: dict[str, LocoResult]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, each family's folds, and each setting's first-hit ranks."""
        return {
            "settings": [s.to_dict() for s in self.settings],
            "families": {
                name: {**family_row(name, r), "folds": r.to_dict()["folds"]}
                for name, r in self.results.items()
            },
            "first_hits": first_hits(self.scores),
        }


def first_hits(scores: Sequence[Scores]) -> list[dict[str, list[list[int]]]]:
    """Per setting and conversation, ``[category, rank of the first hit (0: none)]`` per question.

    Enough to score any family again offline (hit@k and MRR follow from the rank).
    """
    out = []
    for setting in scores:
        by_conversation: dict[str, list[list[int]]] = {}
        for conversation, outcomes in setting.items():
            rows = []
            for o in outcomes:
                mrr = score_question(o.gold, o.retrieved)["mrr"]
                rows.append([o.category, round(1 / mrr) if mrr else 0])
            by_conversation[conversation] = rows
        out.append(by_conversation)
    return out


def family_row(name: str, result: LocoResult) -> dict[str, Any]:
    """One table row: pooled held-out numbers beside the baseline's, by category, fold spread."""
    tuned, base = result.pooled_tuned, result.pooled_default
    deltas = [f.tuned["overall"]["hit@5"] - f.default["overall"]["hit@5"] for f in result.folds]
    return {
        "family": name,
        "hit@5": tuned["overall"]["hit@5"],
        "mrr": tuned["overall"]["mrr"],
        "hit@1": tuned["overall"]["hit@1"],
        "baseline hit@5": base["overall"]["hit@5"],
        "baseline mrr": base["overall"]["mrr"],
        "by category hit@5": {c: m["hit@5"] for c, m in tuned["by_category"].items() if c != "5"},
        "fold hit@5": result.spread("tuned", "hit@5"),
        "fold hit@5 minus baseline": [round(d, 4) for d in deltas],
        "chosen": [result.settings[f.chosen].label for f in result.folds],
    }


def run_levers(
    method: DreamMemMethod,
    conversations: Sequence[LocomoConversation],
    levers: Sequence[str],
    *,
    weights: Sequence[float] = (0.0, 0.5, 1.0),
    depths: Sequence[int] = (),
    setup: LeverSetup,
    k: int = 10,
    on_step: Callable[[str], None] | None = None,
) -> LeverRun:
    """Score every lever setting once, then run the folds per family.

    With ``depths`` (candidates per path besides the configuration's), every lever
    setting is also scored at each depth and each family chooses among all of them:
    the depth is chosen by the folds with the lever weights. The baseline stays the
    all-off setting at the configuration's depth.

    Raises:
        ValueError: fewer than two conversations, or no lever.
    """
    if len(conversations) < 2:
        raise ValueError("leave-one-conversation-out needs at least two conversations")
    if not levers:
        raise ValueError("name at least one lever")
    config = method.memory.pipeline.config
    # A lever the shipped config already runs is taken out at weight 0, so 0 means off for every lever.
    base = dataclasses.replace(
        FusionSetting.of(config), off=tuple(n for n in levers if n in config.active_paths)
    )
    combos = lever_settings(levers, weights)
    tried = other_depths(config.candidates_per_path, depths)
    settings = [base.with_levers(c).with_depth(d) for d in tried for c in combos]
    scores = score_settings(
        method,
        conversations,
        settings,
        k=k,
        on_step=on_step,
        extra_paths=setup.paths,
        extra_specs=setup.specs,
    )
    results = {}
    for name, indices in families(combos, levers).items():
        crossed = [d * len(combos) + i for d in range(len(tried)) for i in indices]
        results[name] = held_out([settings[i] for i in crossed], [scores[i] for i in crossed])
    return LeverRun(settings, scores, results)


def other_depths(configured: int, depths: Sequence[int]) -> list[int | None]:
    """``None`` (the configuration's depth) first, then the other depths asked for, once each."""
    return [None, *dict.fromkeys(d for d in depths if d != configured)]
