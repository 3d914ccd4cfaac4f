"""Every notebook in notebooks/ executes top to bottom without error and without noise on stderr.

The committed notebooks carry their outputs for the docs site (scripts/execute_notebooks.py
writes them); here they run again from a clean kernel.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.integration

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path: Path, tmp_path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    # No loader bars, jieba log lines or warnings: a reader sees only what the cells print.
    assert [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"] == []


def test_every_notebook_is_in_the_docs_nav() -> None:
    nav = (Path(__file__).parents[2] / "mkdocs.yml").read_text(encoding="utf-8")
    assert NOTEBOOKS and all(f"notebooks/{p.name}" in nav for p in NOTEBOOKS)
