"""Assembling the methods of a benchmark run from their names."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed.base import Embedder
from dreammem.errors import ConfigError
from dreammem.recall.pipeline import Reranker
from dreammem.rerank.cross_encoder import CrossEncoderReranker
from dreammem_bench.methods import (
    BenchMethod,
    BM25Method,
    DreamMemMethod,
    DreamMemPathsVariant,
    DreamMemStageVariant,
    FusionMethod,
    RecencyMethod,
    VectorMethod,
)

__all__ = [
    "METHOD_NAMES",
    "build_methods",
    "close_methods",
    "load_reranker",
    "parse_methods",
    "weight_method_name",
]

METHOD_NAMES = ("dreammem", "dreammem+dream", "vector", "bm25", "fusion", "recency")
"""``dreammem+dream``: DreamMem on a store that dreamed once (rules) after the conversation."""


def parse_methods(spec: str) -> list[str]:
    """Split a comma-separated method list and check every name.

    Raises:
        ConfigError: an unknown or repeated name, or none at all.
    """
    names = [n.strip() for n in spec.split(",") if n.strip()]
    unknown = [n for n in names if n not in METHOD_NAMES]
    if unknown or not names or len(set(names)) != len(names):
        raise ConfigError(f"methods must be distinct names among {', '.join(METHOD_NAMES)}; got {spec!r}")
    return names


def load_reranker(
    name_or_path: str | Path | None,
    *,
    max_length: int | None = None,
    quantize: bool = False,
    threads: int | None = None,
) -> Reranker | None:
    """A cross-encoder reranker, or ``None`` when no name is given."""
    if name_or_path is None:
        return None
    return CrossEncoderReranker(name_or_path, max_length=max_length, quantize=quantize, threads=threads)


def build_methods(
    names: Sequence[str],
    *,
    baseline_embedder: Embedder,
    config: DreamMemConfig | None = None,
    dreammem_embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    ablate: bool = False,
    rerank_variants: bool | None = None,
    rerank_weights: Sequence[float] = (),
    variants: Sequence[tuple[str, RecallConfig]] = (),
) -> list[BenchMethod]:
    """The methods to run, in the given order.

    With ``ablate``, one dreammem variant per recall path, with that path switched
    off, follows the dreammem method; with a reranker also one without it and one
    with the other ``rerank_blend`` (cross-encoder order alone, or fused with the
    first stage). ``rerank_variants`` asks for those two alone (default: with ``ablate``).
    With a reranker, each of ``rerank_weights`` adds a variant blended at that
    ``rerank_weight`` (give them a caching reranker to score each pair once). Each of
    ``variants`` (a name and a recall configuration) recalls the dreammem store with it.
    """
    with_rerank_variants = ablate if rerank_variants is None else rerank_variants
    methods: list[BenchMethod] = []
    for name in names:
        if name == "vector":
            methods.append(VectorMethod(baseline_embedder))
        elif name == "bm25":
            methods.append(BM25Method())
        elif name == "fusion":
            methods.append(FusionMethod(baseline_embedder))
        elif name == "recency":
            methods.append(RecencyMethod())
        elif name == "dreammem+dream":
            methods.append(
                DreamMemMethod(config, embedder=dreammem_embedder, reranker=reranker, name=name, dream=True)
            )
        else:
            base = DreamMemMethod(config, embedder=dreammem_embedder, reranker=reranker)
            methods.append(base)
            if ablate:
                paths = base.path_names()
                for off in paths if len(paths) > 1 else ():
                    kept = [p for p in paths if p != off]
                    methods.append(DreamMemPathsVariant(base, kept, name=f"dreammem-no-{off}"))
            if with_rerank_variants:
                methods.extend(_reranker_variants(base, reranker))
            methods.extend(_weight_variants(base, reranker, rerank_weights))
            methods.extend(
                DreamMemStageVariant(base, name=variant, reranker=reranker, recall=recall)
                for variant, recall in variants
            )
    return methods


def weight_method_name(weight: float) -> str:
    """The report name of the dreammem variant blended at ``rerank_weight`` = ``weight``."""
    return f"dreammem-rerank-w{weight:g}"


def _weight_variants(
    base: DreamMemMethod, reranker: Reranker | None, weights: Sequence[float]
) -> list[BenchMethod]:
    if reranker is None:
        return []
    recall = base.memory.pipeline.config
    return [
        DreamMemStageVariant(
            base,
            name=weight_method_name(w),
            reranker=reranker,
            recall=recall.model_copy(update={"rerank_weight": w, "rerank_blend": "rrf"}),
        )
        for w in weights
    ]


def _reranker_variants(base: DreamMemMethod, reranker: Reranker | None) -> list[BenchMethod]:
    if reranker is None:
        return []
    recall = base.memory.pipeline.config
    other = "replace" if recall.rerank_blend == "rrf" else "rrf"
    swapped = recall.model_copy(update={"rerank_blend": other})
    return [
        DreamMemStageVariant(base, name="dreammem-no-rerank", reranker=None),
        DreamMemStageVariant(base, name=f"dreammem-rerank-{other}", reranker=reranker, recall=swapped),
    ]


def close_methods(methods: Sequence[BenchMethod]) -> None:
    """Close the stores that methods opened."""
    for method in methods:
        if isinstance(method, DreamMemMethod):
            method.close()
