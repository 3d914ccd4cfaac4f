"""The API reference, the CLI reference and the README name every public method and command.

A method added to :class:`~dreammem.DreamMemory` (or a mixin it inherits) or a command
added to ``dreammem`` fails here until it is documented. Old names kept for one release
(they carry ``__deprecated__``) are named in the deprecation note instead.
"""

from __future__ import annotations

import importlib.util
import inspect
import re
from pathlib import Path
from types import ModuleType

import pytest

from dreammem import DreamMemory

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
API = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")


def _public() -> dict[str, bool]:
    """Public names of the facade, inherited ones included -> whether each is deprecated."""
    return {
        name: hasattr(inspect.getattr_static(DreamMemory, name), "__deprecated__")
        for name in dir(DreamMemory)
        if not name.startswith("_")
    }


def _is_twin(name: str) -> bool:
    member = getattr(DreamMemory, name)
    return name.startswith("a") and inspect.iscoroutinefunction(member)


def _section(text: str, heading: str) -> str:
    """The text under a ``## heading`` up to the next heading of that level."""
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else None]


def _code_spans(text: str) -> str:
    return " ".join(re.findall(r"`([^`]+)`", text))


def _cli_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference_members() -> list[str]:
    """The members listed under ``::: dreammem.DreamMemory`` in docs/api.md."""
    block = API[API.index("::: dreammem.DreamMemory") :].split("\n\n", 1)[0]
    assert re.search(r"^\s+inherited_members: true$", block, re.M), "inherited members must be rendered"
    return re.findall(r"^\s+- (\w+)$", block, re.M)


def test_the_api_reference_lists_every_public_method_inherited_ones_included() -> None:
    listed = _reference_members()
    assert len(listed) == len(set(listed))
    current = {name for name, old in _public().items() if not old}
    assert current - set(listed) == set(), "missing from docs/api.md"
    assert set(listed) - current == set(), "docs/api.md lists what DreamMemory does not have"
    assert {"dream", "undo_dream", "get_all", "update", "forget_all", "purge", "export", "import_"} <= current


def test_old_names_are_named_in_the_deprecation_notes() -> None:
    old = {name for name, deprecated in _public().items() if deprecated}
    assert old >= {"delete_all", "sync_graph"}
    for name in old:
        assert f"`{name}`" in API
        assert name in _code_spans(_section(README, "## Public API"))


def test_the_readme_api_section_names_every_public_method() -> None:
    section = _code_spans(_section(README, "## Public API"))
    names = {name for name, old in _public().items() if not old}
    missing = {name for name in names if not re.search(rf"(?<![\w.]){re.escape(name)}\b", section)}
    assert missing == set(), f"missing from the README's Public API: {sorted(missing)}"
    assert "filters" in section and "offset" in section


@pytest.mark.parametrize("where", ["README", "reference"])
def test_every_cli_command_is_documented(where: str) -> None:
    reference = _cli_reference()
    paths = [path for path, _ in reference.commands()]
    assert {"dreammem list", "dreammem history", "dreammem purge", "dreammem dream undo"} <= set(paths)
    if where == "reference":
        page = reference.render()
        missing = [p for p in paths if f"## `{p}`" not in page]
    else:
        spans = _code_spans(_section(README, "## CLI"))
        missing = [p for p in paths if not re.search(rf"(?<![\w-]){re.escape(p.split(' ', 1)[1])}\b", spans)]
    assert missing == [], f"missing from the {where}: {missing}"


def test_the_cli_reference_and_the_comparison_are_in_the_site_and_the_log_is_not() -> None:
    mkdocs = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "cli.md" in mkdocs and "comparison.md" in mkdocs
    nav = mkdocs[mkdocs.index("\nnav:") :]
    assert "BENCHMARKS.md" not in nav
    assert re.search(r"exclude_docs: \|\n\s+BENCHMARKS\.md", mkdocs)
