"""Every notebook in notebooks/ executes top to bottom, quietly, and prints what its committed copy shows.

The committed notebooks carry their outputs for the docs site (scripts/execute_notebooks.py
writes them). Here they run again from a clean kernel, and the fresh outputs must match the
committed ones once what differs on every run is masked (ids, clock times, float noise): a
change in behaviour cannot hide behind an old picture. When a test here fails on purpose,
rerun ``PYTHONPATH=. python scripts/execute_notebooks.py`` and commit the notebooks.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat import NotebookNode

pytestmark = pytest.mark.integration

NOTEBOOKS = sorted((Path(__file__).parents[2] / "notebooks").glob("*.ipynb"))

_VOLATILE = (
    (re.compile(r"\b[0-9a-f]{8}(?:[0-9a-f]{24})?\b"), "<id>"),  # record ids, whole or shortened
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\+00:00| UTC)?"), "<time>"),
    (re.compile(r"/tmp/[\w.-]+"), "<tmp>"),
)
_FLOAT = re.compile(r"\d+\.\d{3,}")


def _mask(text: str) -> str:
    for pattern, stand_in in _VOLATILE:
        text = pattern.sub(stand_in, text)
    # Scores to two places: the last digits move with the BLAS build, not with the code.
    return _FLOAT.sub(lambda m: f"{float(m.group()):.2f}", text)


def _printed(notebook: NotebookNode) -> list[list[str]]:
    """What each code cell shows a reader: its text outputs, masked; an image as one marker."""
    shown: list[list[str]] = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        lines: list[str] = []
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                lines += _mask(output.text).splitlines()
            elif "image/png" in output.get("data", {}):
                lines.append("<image>")
            elif "text/plain" in output.get("data", {}):
                lines += _mask(output["data"]["text/plain"]).splitlines()
        shown.append(lines)
    return shown


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_and_matches_its_committed_outputs(path: Path, tmp_path: Path) -> None:
    committed = nbformat.read(path, as_version=4)
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    # No loader bars, jieba log lines or warnings: a reader sees only what the cells print.
    assert [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"] == []
    assert _printed(notebook) == _printed(committed), (
        f"{path.name} prints something else than its committed outputs: "
        "rerun `PYTHONPATH=. python scripts/execute_notebooks.py` and commit the notebooks"
    )


def test_masking_keeps_what_a_reader_would_notice() -> None:
    before = "0.9231 [d00067ac32664ccfb84f36134c3c04c9] (2026-12-01 15:37 UTC) user said: budget 50,000"
    after = "0.9229 [4720214c72b74f91a6f5927fd07441c1] (2026-12-07 07:57 UTC) user said: budget 50,000"
    assert _mask(before) == _mask(after)
    assert _mask("0.923 green tea") != _mask("0.742 green tea")
    assert _mask("budget 50,000") != _mask("budget 60,000")


def test_every_notebook_is_in_the_docs_nav() -> None:
    nav = (Path(__file__).parents[2] / "mkdocs.yml").read_text(encoding="utf-8")
    assert NOTEBOOKS and all(f"notebooks/{p.name}" in nav for p in NOTEBOOKS)
