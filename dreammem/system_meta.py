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
Two more, :data:`LATER_KEYS` (an adapter message's de-duplication key and a keyed
entry), stayed in ``metadata`` until schema 18 (SQLite) and 5 (Neo4j) and export
version 3: :func:`split_later` moves them.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, Final, cast

from pydantic import ConfigDict, TypeAdapter
from pydantic import ValidationError as PydanticError
from typing_extensions import TypedDict

from dreammem.errors import ValidationError

__all__ = [
    "KEYED_KEY",
    "LATER_KEYS",
    "LEGACY_KEYS",
    "MESSAGE_KEY",
    "NOTES_VERSION",
    "SYSTEM_KEYS",
    "SystemMeta",
    "check_system",
    "moved_out",
    "split_later",
    "split_legacy",
]


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
        message_key: On a turn an adapter wrote: the key its de-duplication finds it by
            (``"id:<message id>"`` or a hash of session, role, text and occurrence).
        keyed: On a keyed entry (:mod:`dreammem.keyed`): ``{"path", "key", "value",
            "indexed", "created_at"}``; such a record never updates another statement.
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
    message_key: str
    keyed: dict[str, Any]

    __pydantic_config__ = ConfigDict(extra="forbid", strict=True)  # type: ignore[misc]


SYSTEM_KEYS: frozenset[str] = frozenset(SystemMeta.__optional_keys__)
"""Every key of :class:`SystemMeta` (20)."""

MESSAGE_KEY: Final = "message_key"
"""The system key of an adapter message's de-duplication key (:func:`dreammem.agent_api.ingest_turns`)."""
KEYED_KEY: Final = "keyed"
"""The system key of a keyed entry's path, key and value (:mod:`dreammem.keyed`)."""

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

LATER_KEYS: tuple[str, ...] = (MESSAGE_KEY, KEYED_KEY)
"""The keys the library kept in ``metadata`` until SQLite schema 18, Neo4j schema 5 and export version 3."""

_LATER_TYPES: dict[str, type] = {MESSAGE_KEY: str, KEYED_KEY: dict}
"""The type the library wrote each of :data:`LATER_KEYS` with; a value of another type was a caller's."""

NOTES_VERSION = 3
"""Where a record's dict keeps the notes: 1 all in ``metadata``; 2 in ``system`` but
:data:`LATER_KEYS` in ``metadata``; 3 all in ``system`` (the export version that wrote it)."""


def split_legacy(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], SystemMeta]:
    """A record's metadata as written before the move: ``(the caller's keys, the library's notes)``.

    What the SQLite migration 17 and the Neo4j upgrade to schema 4 do to a stored
    record, and ``import_`` to a record of an export without a ``system`` field.
    """
    caller = {k: v for k, v in metadata.items() if k not in LEGACY_KEYS}
    return caller, cast(SystemMeta, {k: metadata[k] for k in LEGACY_KEYS if k in metadata})


def split_later(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], SystemMeta]:
    """A record's metadata as written before schema 18: ``(the caller's keys, the two later notes)``.

    ``message_key`` moves when it is a string and ``keyed`` when it is an object (what
    the library wrote); a value of another type stays the caller's. What the SQLite
    migration 18 and the Neo4j upgrade to schema 5 do, and ``import_`` to a version-2 export.
    """
    moved = {k: metadata[k] for k in LATER_KEYS if isinstance(metadata.get(k), _LATER_TYPES[k])}
    return {k: v for k, v in metadata.items() if k not in moved}, cast(SystemMeta, moved)


def moved_out(data: Mapping[str, Any], written: int) -> dict[str, Any]:
    """A record's dict (:meth:`MemoryRecord.to_dict`) with the notes out of its metadata.

    ``written`` is the :data:`NOTES_VERSION` the dict was written at. At version 1 the
    notes were all in ``metadata`` (a ``system`` field then is not the library's): they
    move out (:func:`split_legacy`, then :func:`split_later`). At version 2,
    :data:`LATER_KEYS` move (:func:`split_later`). A dict of version 3 is returned as is,
    whatever its ``metadata`` names.
    """
    metadata, system = data.get("metadata"), data.get("system", {})
    if written == 1 and isinstance(metadata, Mapping):
        metadata, system = split_legacy(metadata)
    if written >= NOTES_VERSION or not isinstance(metadata, Mapping) or not isinstance(system, Mapping):
        return dict(data)
    caller, later = split_later(metadata)
    return {**data, "metadata": caller, "system": {**system, **later}}


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
