"""What the library keeps about a record for itself: :attr:`MemoryRecord.system`.

The write path, the dream and erasure note their decisions on a record and read them
back: which older memory a newer one may replace, what an update decided, whether a
non-user record reads like an instruction, what a summary or a pattern stands for.
These notes live in the record's ``system`` field, apart from the caller's
``metadata``: no public write takes a ``system`` value, so a caller's
``metadata={"possibly_outdated_by": [...]}`` is the caller's own data, stored and
returned as given and never read by the library (issue 35, item 3).

:class:`SystemMeta` names every key the library writes, with its type; it is the one
list (:data:`SYSTEM_KEYS`). Before schema 17 (SQLite) and 4 (Neo4j) these notes lived in
``metadata`` under the names of :data:`LEGACY_KEYS`; opening an older store, or
importing an export written before the move, takes them out with :func:`split_legacy`
(:func:`moved_out` for a record written as a dict: an export line, a dream's undo log).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, cast

from pydantic import ConfigDict, TypeAdapter
from pydantic import ValidationError as PydanticError
from typing_extensions import TypedDict

from dreammem.errors import ValidationError

__all__ = ["LEGACY_KEYS", "SYSTEM_KEYS", "SystemMeta", "check_system", "moved_out", "split_legacy"]


class SystemMeta(TypedDict, total=False):
    """The library's notes on one record (every key optional).

    Attributes:
        possibly_outdated_by: On an older active record: ids of newer records that may
            replace it (recall puts them first and marks this one "possibly outdated").
        possibly_outdated_why: Beside it: ``{newer id: {"rule", "reason"}}``.
        possibly_outdates: On the newer record: ids of the older records it marked.
        update_decision: On a superseded record: ``{"action", "by", "rule", "reason"}``.
        update_reverted: On a record whose supersession was reverted: the decision and when.
        suspect_instruction: A non-user record that reads like an instruction.
        from_turn: On an explicit semantic record: the id of the turn that stated it.
        correction: That statement corrected an earlier one.
        dream_id: The dream that wrote or last changed the record.
        dream_kept_why: Why the dream kept the record verbatim.
        summarizes: On a summary: how many records it replaced.
        verbatim_lines_for: On a summary: the ids whose lines it quotes verbatim.
        merged: On a record the second-level dream kept: the ids merged into it.
        support: On a pattern: how many observations it stands for.
        observation: On a pattern: the verbatim observation.
        of_kind: On a pattern: the kind of statement it generalises.
        archived: On an archived record: ``{"reason", "dream_id", "at"[, "by"]}``.
        edited: On the earlier text of an edited record: ``{"into", "at"}``.
    """

    possibly_outdated_by: list[str]
    possibly_outdated_why: dict[str, dict[str, Any]]
    possibly_outdates: list[str]
    update_decision: dict[str, Any]
    update_reverted: dict[str, Any]
    suspect_instruction: bool
    from_turn: str
    correction: bool
    dream_id: str
    dream_kept_why: str
    summarizes: int
    verbatim_lines_for: list[str]
    merged: list[str]
    support: int
    observation: str
    of_kind: str
    archived: dict[str, str]
    edited: dict[str, str]

    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]


SYSTEM_KEYS: frozenset[str] = frozenset(SystemMeta.__optional_keys__)
"""Every key of :class:`SystemMeta` (18)."""

LEGACY_KEYS: tuple[str, ...] = (
    "possibly_outdated_by",
    "possibly_outdated_why",
    "possibly_outdates",
    "update_decision",
    "update_reverted",
    "suspect_instruction",
    "from_turn",
    "correction",
    "dream_id",
    "dream_kept_why",
    "summarizes",
    "verbatim_lines_for",
    "merged",
    "support",
    "observation",
    "of_kind",
    "archived",
    "edited",
)
"""The keys the library kept in ``metadata`` before the move (fixed: a shipped migration reads them)."""


def split_legacy(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], SystemMeta]:
    """A record's metadata as written before the move: ``(the caller's keys, the library's notes)``.

    What the SQLite migration 17 and the Neo4j upgrade to schema 4 do to a stored
    record, and ``import_`` to a record of an export without a ``system`` field.
    """
    caller = {k: v for k, v in metadata.items() if k not in LEGACY_KEYS}
    return caller, cast(SystemMeta, {k: metadata[k] for k in LEGACY_KEYS if k in metadata})


def moved_out(data: Mapping[str, Any]) -> dict[str, Any]:
    """A record's dict (:meth:`MemoryRecord.to_dict`) with the notes out of its metadata.

    A dict written before the move has no ``system``: its notes move out of ``metadata``
    (:func:`split_legacy`). A newer one, which always has ``system``, is returned as is,
    whatever its ``metadata`` names.
    """
    metadata = data.get("metadata")
    if "system" in data or not isinstance(metadata, Mapping):
        return dict(data)
    caller, system = split_legacy(metadata)
    return {**data, "metadata": caller, "system": system}


@cache
def _adapter() -> TypeAdapter[SystemMeta]:
    return TypeAdapter(SystemMeta)


def check_system(value: object, what: str = "system") -> SystemMeta:
    """``value`` as a record's system notes, or a ValidationError.

    Only the keys of :class:`SystemMeta`, each with its type (what ``import_`` accepts
    from an export: nothing else of a record's system notes can come from outside).
    """
    try:
        return _adapter().validate_python(value)
    except PydanticError as exc:
        raise ValidationError(f"{what}: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}") from exc
