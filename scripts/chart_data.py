"""Write the LoCoMo chart data of the docs from a ``dreammem bench locomo --json`` report.

    python scripts/chart_data.py REPORT.json --commit COMMIT --date YYYY-MM-DD [--load "2-4"]

The docs' benchmarks page draws ``docs/assets/benchmarks.json`` (``scripts/docs_hooks.py``);
its ``locomo`` entry is this script's output, never typed by hand, so the chart shows
exactly what one recorded run measured. Record the same run in ``docs/BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHART_DATA = ROOT / "docs" / "assets" / "benchmarks.json"
CATEGORIES = {
    "1": "1 multi-hop",
    "2": "2 temporal",
    "3": "3 open-domain",
    "4": "4 single-hop",
    "5": "5 adversarial",
}
METHODS = {
    "dreammem": "DreamMem",
    "bm25": "BM25",
    "fusion": "fusion (vector + BM25)",
    "vector": "vector (MiniLM)",
    "recency": "recency (last 10)",
}
METRIC = "hit@5"


def locomo_entry(report: dict[str, Any], *, commit: str, date: str, load: str | None) -> dict[str, Any]:
    """The chart entry: hit@5 overall (categories 1-4) and by category, one series per method."""
    methods: dict[str, list[float]] = {}
    for key, label in METHODS.items():
        scores = report["methods"].get(key)
        if scores is None:
            continue
        by_category = scores["by_category"]
        values = [scores["overall"][METRIC], *(by_category[c][METRIC] for c in CATEGORIES)]
        methods[label] = [round(value, 3) for value in values]
    loaded = f", load {load}" if load else ""
    return {
        "source": f"scripts/chart_data.py from the --json report of the run at commit {commit} "
        f"({date}{loaded}; docs/BENCHMARKS.md, 'LoCoMo: the docs' chart run')",
        "command": "HF_HUB_OFFLINE=1 dreammem bench locomo --data locomo_dev.json --json .bench/locomo.json",
        "metric": METRIC,
        "n": report["methods"]["dreammem"]["overall"]["n"],
        "dreammem_mrr@10": round(report["methods"]["dreammem"]["overall"]["mrr"], 3),
        "categories": ["overall (1-4)", *CATEGORIES.values()],
        "methods": methods,
    }


def main() -> None:
    """Update the ``locomo`` entry of the chart data from one report."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("report", type=Path)
    parser.add_argument("--commit", required=True)
    parser.add_argument("--date", required=True)
    parser.add_argument("--load", default=None, help="load average during the run, as text")
    args = parser.parse_args()
    report = json.loads(args.report.read_text(encoding="utf-8"))
    data = json.loads(CHART_DATA.read_text(encoding="utf-8"))
    data["locomo"] = locomo_entry(report, commit=args.commit, date=args.date, load=args.load)
    CHART_DATA.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(data["locomo"]["methods"]["DreamMem"]))


if __name__ == "__main__":
    main()
