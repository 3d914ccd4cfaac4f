"""MkDocs hooks: pages generated from the code at build time (``mkdocs.yml`` ``hooks:``).

- ``configuration.md`` from the pydantic models (``scripts/config_reference.py``);
- ``cli.md`` from the ``dreammem`` command (``scripts/cli_reference.py``);
- the benchmark charts (``assets/*.svg``) from ``docs/assets/benchmarks.json``.

It also keeps the build log quiet (jieba's dictionary log lines).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))

from charts import bar_chart
from cli_reference import render as render_cli
from config_reference import render

from dreammem.quiet import quiet_jieba


def _chart(data: dict[str, Any], title: str) -> str:
    return bar_chart(title, data["categories"], data["methods"], data["metric"])


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    """Load jieba quietly first: Material's search plugin segments the Chinese pages with it."""
    quiet_jieba()
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages and charts to the site."""
    files.append(File.generated(config, "configuration.md", content=render()))
    files.append(File.generated(config, "cli.md", content=render_cli()))
    data = json.loads((Path(config.docs_dir) / "assets" / "benchmarks.json").read_text(encoding="utf-8"))
    charts = {
        "locomo-hit5.svg": ("locomo", "LoCoMo dev split: hit@5 by question category"),
        "latency-stages.svg": ("latency", "Recall latency by stage, p50 (ms)"),
    }
    for name, (key, title) in charts.items():
        files.append(File.generated(config, f"assets/{name}", content=_chart(data[key], title)))
    return files
