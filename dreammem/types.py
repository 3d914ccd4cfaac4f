"""Value objects shared by every layer: the memory record and its enums.

A :class:`MemoryRecord` is immutable; stores return new records (``dataclasses.replace``)
when a field changes. Its ``id`` is the trace id: stable, returned with every recall
and logged whenever the record is used.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from enum import IntEnum, StrEnum
from operator import itemgetter
from typing import Any, TypeVar, cast

from dreammem.system_meta import SystemMeta

__all__ = [
    "FIXED_FIELDS",
    "Kind",
    "Layer",
    "MemoryRecord",
    "Priority",
    "RecordDecoder",
    "Role",
    "Source",
    "Status",
    "new_id",
    "utcnow",
]


FIXED_FIELDS = frozenset(
    {"id", "user_id", "agent_id", "session_id", "source", "role", "speaker", "created_at"}
)
"""Record fields written once, at insert: who and what a record is never changes (every store)."""


class Layer(StrEnum):
    """Where a memory lives (docs/concepts.md, "Layers")."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class Kind(StrEnum):
    """What a memory says."""

    TURN = "turn"
    FACT = "fact"
    PREFERENCE = "preference"
    CONSTRAINT = "constraint"
    EVENT = "event"
    RULE = "rule"
    SUMMARY = "summary"
    PATTERN = "pattern"
    TASK_TRACE = "task_trace"


class Role(StrEnum):
    """Who spoke a conversation turn."""

    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    SYSTEM = "system"


class Source(StrEnum):
    """Where a memory came from; confidence is derived from it, never from use."""

    USER_EXPLICIT = "user_explicit"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    EXTRACTED = "extracted"
    INFERRED = "inferred"
    DISTILLED = "distilled"


SOURCE_CONFIDENCE: Mapping[Source, float] = {
    Source.USER_EXPLICIT: 0.95,
    Source.USER: 0.8,
    Source.DISTILLED: 0.75,
    Source.EXTRACTED: 0.7,
    Source.ASSISTANT: 0.6,
    Source.TOOL: 0.6,
    Source.INFERRED: 0.5,
}
"""Default confidence per source: an explicit user statement beats an extraction
beats an inference."""


class Priority(IntEnum):
    """Write-time priority tag: user input high, tool output normal, errors low."""

    LOW = 1
    NORMAL = 2
    HIGH = 3


class Status(StrEnum):
    """Lifecycle of a record. Only ``active`` records are recalled."""

    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    DELETED = "deleted"


def utcnow() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


def new_id() -> str:
    """A new trace id (a random UUID4 in hex, 32 characters)."""
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    """One memory.

    Attributes:
        id: The trace id: stable, returned with every recall.
        user_id: The owner; every read and write is scoped by it.
        content: The text, with numbers, dates and names verbatim.
        layer: working, episodic, semantic or procedural.
        kind: turn, fact, preference, constraint, event, rule, summary, ...
        source: Where it came from (drives ``confidence``).
        role: The speaker's part (user, assistant, ...), for conversation turns.
        speaker: Who said it, by name, when the writer knows ("Gina" in a group chat or a
            transcript); set at ingest, never read out of ``content``. None in a
            one-user chat.
        agent_id: Optional agent scope inside the user.
        session_id: The conversation session it came from.
        confidence: 0..1, derived from ``source``; never raised by retrieval.
        importance: 1..5.
        priority: Write-time tag (user input high, tool output normal, errors low).
        pinned: Core memory: when it does not rank, recall adds it after the ranked
            hits from the core budget (``RecallConfig.pinned_max_count``, default 2).
        created_at: When it was written.
        event_time: When what it describes happened.
        last_accessed_at: When recall last returned it.
        access_count: How often recall returned it.
        status: active, superseded, archived or deleted.
        superseded_by: The id of the record that replaced it.
        valid_to: When it stopped being true (set when superseded).
        provenance: Ids of the records it was distilled from.
        entities: Names, ids, amounts and dates found in it.
        slot: ``subject/attribute`` key; a newer active record with the same slot
            supersedes an older one.
        metadata: The caller's own JSON-serialisable data: stored and returned as given,
            never read by the library.
        system: What the library notes about the record for itself (update relations,
            the instruction flag, the dream's notes; :class:`~dreammem.system_meta.SystemMeta`).
            No public write takes it; recall, the dream and history read it.
    """

    user_id: str
    content: str
    layer: Layer = Layer.EPISODIC
    kind: Kind = Kind.TURN
    source: Source = Source.USER
    role: Role | None = None
    speaker: str | None = None
    agent_id: str | None = None
    session_id: str | None = None
    confidence: float = 0.8
    importance: int = 3
    priority: Priority = Priority.NORMAL
    pinned: bool = False
    created_at: datetime = field(default_factory=utcnow)
    event_time: datetime = field(default_factory=utcnow)
    last_accessed_at: datetime | None = None
    access_count: int = 0
    status: Status = Status.ACTIVE
    superseded_by: str | None = None
    valid_to: datetime | None = None
    provenance: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    slot: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    system: SystemMeta = field(default_factory=lambda: SystemMeta())
    id: str = field(default_factory=new_id)

    @property
    def is_active(self) -> bool:
        """True when the record takes part in recall."""
        return self.status is Status.ACTIVE

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (datetimes as ISO strings, enums as values)."""
        out: dict[str, Any] = {}
        for name in self.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, datetime):
                value = value.isoformat()
            elif isinstance(value, Priority):
                value = value.name.lower()
            elif isinstance(value, StrEnum):
                value = value.value
            elif isinstance(value, tuple):
                value = list(value)
            elif isinstance(value, Mapping):
                value = dict(value)
            out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryRecord:
        """Rebuild a record from :meth:`to_dict` output: the one record codec.

        Stores decode their rows through it too (a priority may come as its name or
        its number; unknown keys are ignored). The fields are converted by
        :class:`RecordDecoder`, which stores also use on rows of one column layout.
        """
        if missing := [name for name in _REQUIRED if name not in data]:
            raise KeyError(missing[0])
        return _FROM_DICT(tuple(data.get(name) for name in _FIELDS))


_MEMBERS: dict[type[StrEnum], dict[str, StrEnum]] = {
    kind: {member.value: member for member in kind} for kind in (Layer, Kind, Role, Source, Status)
}


_E = TypeVar("_E", bound=StrEnum)


def _member(kind: type[_E], value: str) -> _E:
    """``kind(value)`` without the enum call on the decoding path (an unknown value raises the same)."""
    found = _MEMBERS[kind].get(value)
    return found if found is not None else kind(value)  # type: ignore[return-value]


_PRIORITIES: dict[int, Priority] = {member.value: member for member in Priority}


_LATER_FIELDS = ("speaker", "system")
"""Fields whose column a later migration added (15, 17): a row of an older layout reads them as None."""


class RecordDecoder:
    """Decodes value rows of one column layout into records: what :meth:`MemoryRecord.from_dict` gives.

    A store reading many rows of the same layout finds each field's position once
    instead of building a dict per row and looking every field up by name (about half
    of a recall's record decoding). Each field is converted as ``from_dict`` converts
    it (``tests/unit/test_record_decoder.py`` compares the two).

    Args:
        names: The column names, in the order of each row's values (extra columns are
            ignored; every field of :class:`MemoryRecord` must be there but those of
            ``_LATER_FIELDS``, which read as None).
        loads: Parses the stored text of ``provenance``, ``entities``, ``metadata`` and ``system``.

    Raises:
        ValueError: a field has no column.
    """

    def __init__(self, names: Sequence[str], loads: Callable[[str], Any]) -> None:
        position = {name: index for index, name in enumerate(names)}
        order = [f.name for f in fields(MemoryRecord)]  # the constructor's parameter order
        if missing := [name for name in order if name not in position and name not in _LATER_FIELDS]:
            raise ValueError(f"no column for the record fields {missing}")
        later = [name for name in _LATER_FIELDS if name not in position]
        getter = itemgetter(*(position[name] for name in order if name in position))
        if later:  # a layout from before these columns: they read as None
            at = [order.index(name) for name in later]

            def values(row: Sequence[Any]) -> tuple[Any, ...]:
                found = list(getter(row))
                for index in at:
                    found.insert(index, None)
                return tuple(found)

            self._values: Callable[[Sequence[Any]], tuple[Any, ...]] = values
        else:
            self._values = getter
        self._loads = loads

    def __call__(self, row: Sequence[Any]) -> MemoryRecord:
        """The record stored in one row (indexable by position, as a ``sqlite3.Row`` is)."""
        (
            user_id, content, layer, kind, source, role, speaker, agent_id, session_id, confidence,
            importance, priority, pinned, created_at, event_time, last_accessed_at, access_count, status,
            superseded_by, valid_to, provenance, entities, slot, metadata, system, record_id,
        ) = self._values(row)  # fmt: skip
        if not created_at or not event_time:
            raise ValueError("a record needs created_at and event_time")
        loads = self._loads
        level = _PRIORITIES.get(priority) if not isinstance(priority, str) else None
        return MemoryRecord(
            user_id,
            content,
            _member(Layer, layer),
            _member(Kind, kind),
            _member(Source, source),
            _member(Role, role) if role else None,
            speaker,
            agent_id,
            session_id,
            float(confidence),
            int(importance),
            level if level is not None else _priority(priority),
            bool(pinned),
            datetime.fromisoformat(created_at),
            datetime.fromisoformat(event_time),
            datetime.fromisoformat(last_accessed_at) if last_accessed_at else None,
            int(access_count or 0),
            _member(Status, status),
            superseded_by,
            datetime.fromisoformat(valid_to) if valid_to else None,
            tuple(loads(provenance) or ()),
            tuple(loads(entities) or ()),
            slot,
            dict(loads(metadata) or {}),
            cast(SystemMeta, dict(loads(system))) if system and system != "{}" else SystemMeta(),
            record_id,
        )


def _priority(value: str | int) -> Priority:
    """A priority from its name (any case) or its number, as :meth:`MemoryRecord.from_dict` reads it."""
    return Priority[value.upper()] if isinstance(value, str) else Priority(value)


_FIELDS = tuple(f.name for f in fields(MemoryRecord))
"""The record's fields in the constructor's order."""
_REQUIRED = (
    "id", "user_id", "content", "layer", "kind", "source", "confidence", "importance", "priority", "pinned",
    "status",
)  # fmt: skip
"""The keys :meth:`MemoryRecord.from_dict` cannot do without (the others default)."""
_FROM_DICT = RecordDecoder(_FIELDS, lambda value: value)
"""Decodes a dict's values in field order (lists and mappings already parsed)."""
