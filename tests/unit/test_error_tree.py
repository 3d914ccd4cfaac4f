"""The error tree drawn in errors.py's docstring is the tree the classes form."""

from __future__ import annotations

import builtins
import re

import pytest

import dreammem
from dreammem import errors

DRAWN = errors.__doc__ or ""


def _drawn_tree() -> dict[str, tuple[str, str | None]]:
    """``{class: (drawn parent, drawn builtin)}`` read from the module docstring."""
    tree: dict[str, tuple[str, str | None]] = {}
    stack: list[tuple[int, str]] = []
    for line in DRAWN.splitlines():
        m = re.match(r"^(\s*)(?:[│ ]*)(?:[├└]── )?(\w+Error)(?:\((\w+)\))?\s", line + " ")
        if m is None:
            continue
        depth = len(line) - len(line.lstrip(" │├└─"))
        name, builtin = m[2], m[3]
        while stack and stack[-1][0] >= depth:
            stack.pop()
        tree[name] = (stack[-1][1] if stack else "Exception", builtin)
        stack.append((depth, name))
    return tree


def test_the_docstring_draws_every_error_class_with_its_parent_and_builtin() -> None:
    tree = _drawn_tree()
    assert set(tree) == set(errors.__all__)
    for name, (parent, builtin) in tree.items():
        cls = getattr(errors, name)
        assert cls.__bases__[0].__name__ == parent, name
        if builtin is not None:
            assert issubclass(cls, getattr(builtins, builtin)), name


def test_every_error_is_exported_from_the_package() -> None:
    for name in errors.__all__:
        assert getattr(dreammem, name) is getattr(errors, name)


@pytest.mark.parametrize(
    ("error", "builtin"),
    [
        (errors.ConfigError("x"), ValueError),
        (errors.ValidationError("x"), ValueError),
        (errors.ScopeError("x"), PermissionError),
        (errors.NotFoundError("x"), LookupError),
        (errors.BackendError("x"), RuntimeError),
        (errors.LLMBudgetError("x"), RuntimeError),
    ],
)
def test_callers_can_catch_by_builtin_or_by_the_base(error: Exception, builtin: type[Exception]) -> None:
    with pytest.raises(builtin):
        raise error
    with pytest.raises(errors.DreamMemError):
        raise error


def test_only_backend_errors_that_may_clear_are_retryable() -> None:
    assert not errors.BackendError("disk I/O error").is_retryable
    assert errors.BackendError("database is locked", is_retryable=True).is_retryable
    down = errors.GraphUnavailableError("connection refused")
    assert down.is_retryable and isinstance(down, errors.BackendError) and str(down) == "connection refused"
