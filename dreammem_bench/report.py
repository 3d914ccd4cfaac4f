"""The benchmark report: the JSON document and its table.

JSON shape (stable, compared across runs)::

    {"methods": {NAME: {"overall": {...}, "adversarial": {...},
                        "by_category": {"1": {...}, ...},
                        "latency_ms": {"p50": .., "p95": ..}, "ingest_per_s": ..}},
     "data": FILE, "reranker": NAME_OR_NULL, ...}

with metric keys ``hit@1, hit@5, hit@10, recall@5, recall@10, mrr, n``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.table import Table

from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.metrics import percentile, summarize
from dreammem_bench.runner import MethodRun

__all__ = ["build_report", "render_table"]

_CATEGORY_NAMES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}


def build_report(
    runs: Mapping[str, MethodRun],
    *,
    data: str,
    reranker: str | None,
    k: int,
    conversations: Sequence[LocomoConversation],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON-ready report of a run."""
    methods: dict[str, Any] = {}
    for name, run in runs.items():
        ingest_from = runs.get(run.shares_index_with or name, run)
        methods[name] = {
            **summarize(run.outcomes),
            "latency_ms": {
                "p50": round(percentile(run.latencies_ms, 50), 2),
                "p95": round(percentile(run.latencies_ms, 95), 2),
            },
            "ingest_per_s": _ingest(ingest_from),
        }
        if run.shares_index_with:
            methods[name]["shares_index_with"] = run.shares_index_with
    return {
        "methods": methods,
        "data": data,
        "reranker": reranker,
        "k": k,
        "conversations": [c.sample_id for c in conversations],
        "skipped_questions": sum(c.skipped_questions for c in conversations),
        "dropped_evidence": sum(c.dropped_evidence for c in conversations),
        **dict(extra or {}),
    }


def _ingest(run: MethodRun) -> float | None:
    # A method with nothing to build (recency) has no meaningful rate.
    return round(run.ingest_per_s, 1) if run.ingest_seconds >= 1e-3 else None


def render_table(report: Mapping[str, Any]) -> Table:
    """One row per method: overall metrics, adversarial hit@5, per-category hit@5, cost."""
    table = Table(title=f"LoCoMo retrieval (categories 1-4; k={report.get('k')})")
    columns = ["method", "hit@1", "hit@5", "hit@10", "R@5", "R@10", "MRR", "sess@5", "n"]
    columns += [f"{c} {n}" for c, n in _CATEGORY_NAMES.items()] + [
        "adv hit@5",
        "p50 ms",
        "p95 ms",
        "ingest/s",
    ]
    for column in columns:
        table.add_column(column, justify="left" if column == "method" else "right")
    for name, entry in report["methods"].items():
        overall = entry["overall"]
        by_category = entry["by_category"]
        row = [name]
        keys = ("hit@1", "hit@5", "hit@10", "recall@5", "recall@10", "mrr", "s_hit@5")
        row += [f"{overall[key]:.3f}" for key in keys]
        row.append(str(overall["n"]))
        row += [f"{by_category[c]['hit@5']:.3f}" if c in by_category else "-" for c in _CATEGORY_NAMES]
        row.append(f"{entry['adversarial']['hit@5']:.3f}")
        row += [f"{entry['latency_ms']['p50']:.1f}", f"{entry['latency_ms']['p95']:.1f}"]
        ingest = entry["ingest_per_s"]
        row.append("-" if ingest is None else f"{ingest:.0f}")
        table.add_row(*row)
    return table
