"""Recall filters: which memories a recall may return, beyond the user scope.

A :class:`RecallFilter` is validated once (:meth:`RecallFilter.parse`) and applied
as one predicate (:meth:`RecallFilter.matches`) to the fused candidates before the
top ``k`` are taken, and to the pinned memories, so every recall path obeys it
alike. The user scope is never part of a filter: it is always applied first.

Example:
    >>> RecallFilter.parse({"agent_id": "planner", "metadata": {"project": "apollo"}})
    RecallFilter(metadata={'project': 'apollo'}, agent_id='planner', session_id=None, layers=None, kinds=None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from dreammem.errors import ValidationError
from dreammem.types import Kind, Layer, MemoryRecord
from dreammem.validation import check_id, check_metadata

__all__ = ["RecallFilter"]

_E = TypeVar("_E", bound=StrEnum)
_FIELDS = ("metadata", "agent_id", "session_id", "layers", "kinds")


@dataclass(frozen=True, slots=True)
class RecallFilter:
    """Conditions a memory must meet to be recalled (all given ones must hold).

    Attributes:
        metadata: Top-level metadata keys and the exact JSON value each must have.
        agent_id: Only memories written for this agent.
        session_id: Only memories of this session.
        layers: Only memories of these layers.
        kinds: Only memories of these kinds.
    """

    metadata: Mapping[str, Any] = field(default_factory=dict)
    agent_id: str | None = None
    session_id: str | None = None
    layers: frozenset[Layer] | None = None
    kinds: frozenset[Kind] | None = None

    @classmethod
    def parse(cls, value: object) -> RecallFilter | None:
        """A validated filter from a :class:`RecallFilter`, a mapping of its fields, or None.

        Raises:
            ValidationError: an unknown field, a value of the wrong type, an unknown
                layer or kind, or metadata that is not JSON.
        """
        if value is None:
            return None
        if isinstance(value, RecallFilter):
            value = {name: getattr(value, name) for name in _FIELDS}
        if not isinstance(value, Mapping):
            raise ValidationError(f"filters must be a RecallFilter or a mapping, got {type(value).__name__}")
        if unknown := sorted(set(map(str, value)) - set(_FIELDS)):
            raise ValidationError(f"unknown filter fields {unknown}; known: {list(_FIELDS)}")
        parsed = cls(
            metadata=check_metadata(value.get("metadata")),
            agent_id=check_id(value.get("agent_id"), "filters.agent_id"),
            session_id=check_id(value.get("session_id"), "filters.session_id"),
            layers=_enum_set(value.get("layers"), Layer, "filters.layers"),
            kinds=_enum_set(value.get("kinds"), Kind, "filters.kinds"),
        )
        return None if parsed.empty else parsed

    @property
    def empty(self) -> bool:
        """True when the filter lets every memory through."""
        return (
            not self.metadata
            and self.agent_id is None
            and self.session_id is None
            and (self.layers is None and self.kinds is None)
        )

    def matches(self, record: MemoryRecord) -> bool:
        """True when the record meets every condition."""
        if self.agent_id is not None and record.agent_id != self.agent_id:
            return False
        if self.session_id is not None and record.session_id != self.session_id:
            return False
        if self.layers is not None and record.layer not in self.layers:
            return False
        if self.kinds is not None and record.kind not in self.kinds:
            return False
        return all(
            key in record.metadata and _same_json(record.metadata[key], wanted)
            for key, wanted in self.metadata.items()
        )


def _enum_set(value: object, enum: type[_E], what: str) -> frozenset[_E] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list | tuple | set | frozenset) or not items:
        raise ValidationError(f"{what} must be a non-empty list of names, got {value!r}")
    try:
        return frozenset(enum(item) for item in items)
    except ValueError as exc:
        allowed = ", ".join(member.value for member in enum)
        raise ValidationError(f"{what}: {exc} (allowed: {allowed})") from exc


def _same_json(stored: object, wanted: object) -> bool:
    """Equality of two JSON values: numbers by value, but ``true`` is not ``1``."""
    if isinstance(stored, bool) or isinstance(wanted, bool):
        return type(stored) is type(wanted) and stored == wanted
    if isinstance(stored, Mapping) and isinstance(wanted, Mapping):
        return stored.keys() == wanted.keys() and all(_same_json(stored[k], wanted[k]) for k in stored)
    if isinstance(stored, list) and isinstance(wanted, list):
        return len(stored) == len(wanted) and all(map(_same_json, stored, wanted))
    return type(stored) in _SCALARS and type(wanted) in _SCALARS and stored == wanted


_SCALARS = (str, int, float, type(None))
