"""Execute the notebooks in place, so the docs site shows their outputs.

    PYTHONPATH=. python scripts/execute_notebooks.py [notebooks/NAME.ipynb ...]

CI executes them again and fails when what they print differs from the committed outputs
(tests/integration/test_notebooks.py): rerun this script after a change in behaviour.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]


def execute(path: Path) -> None:
    """Run one notebook top to bottom in a scratch directory and write it back with outputs."""
    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory() as scratch:
        client = NotebookClient(
            notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": scratch}}
        )
        client.execute()
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)  # timings would change the file on every run
    nbformat.write(notebook, path)


if __name__ == "__main__":
    for name in sys.argv[1:] or sorted(str(p) for p in (ROOT / "notebooks").glob("*.ipynb")):
        print(f"executing {name}", flush=True)
        execute(Path(name))
