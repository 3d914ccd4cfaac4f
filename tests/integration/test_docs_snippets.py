"""The Python blocks of the docs pages run as written, top to bottom, one namespace per page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.integration

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = ["getting-started.md", "guides/langchain.md", "guides/llamaindex.md", "guides/mcp.md"]


def _blocks(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("page", PAGES)
def test_page_snippets_run(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = _blocks(page)
    assert blocks, f"no python block in {page}"
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {}
    for n, code in enumerate(blocks):
        exec(compile(code, f"{page} block {n + 1}", "exec"), namespace)
    assert (tmp_path / "memory").is_dir()  # every page's example writes a real store
