"""The numbers the README and the docs' benchmarks page state are those of the chart data.

``docs/assets/benchmarks.json`` is written by ``scripts/chart_data.py`` from one recorded
benchmark run; the prose quotes it, and this test keeps the two from drifting apart.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHART_DATA = json.loads((ROOT / "docs" / "assets" / "benchmarks.json").read_text(encoding="utf-8"))


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("chart_data", ROOT / "scripts" / "chart_data.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _percent(method: str) -> str:
    return f"{round(CHART_DATA['locomo']['methods'][method][0] * 100)} %"


@pytest.mark.parametrize("page", ["README.md", "docs/benchmarks.md"])
def test_quoted_locomo_numbers_are_the_chart_data(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert f"for **{_percent('DreamMem')}**" in text or f"for {_percent('DreamMem')} of questions" in text
    assert f"{_percent('BM25')}" in text
    assert f"MRR@10 {CHART_DATA['locomo']['dreammem_mrr@10']:.2f}" in text


def test_chart_entry_comes_from_a_bench_report() -> None:
    def scores(hit5: float) -> dict[str, object]:
        by_category = {c: {"hit@5": round(hit5 + int(c) / 100, 2)} for c in "12345"}
        return {"overall": {"hit@5": hit5, "mrr": hit5 / 2, "n": 760}, "by_category": by_category}

    report = {"methods": {"dreammem": scores(0.7), "bm25": scores(0.5), "vector": scores(0.4)}}
    entry = _script().locomo_entry(report, commit="abc1234", date="2026-12-01", load=None)
    assert entry["methods"] == {
        "DreamMem": [0.7, 0.71, 0.72, 0.73, 0.74, 0.75],
        "BM25": [0.5, 0.51, 0.52, 0.53, 0.54, 0.55],
        "vector (MiniLM)": [0.4, 0.41, 0.42, 0.43, 0.44, 0.45],
    }
    assert entry["categories"][0] == "overall (1-4)" and len(entry["categories"]) == 6
    assert entry["dreammem_mrr@10"] == 0.35 and entry["n"] == 760 and "abc1234" in entry["source"]
