"""Turning one conversation turn into the records the write path stores.

Pure functions: no I/O. Every turn becomes an episodic record; a user turn with an
explicit preference, constraint, correction or "remember this" also becomes a
semantic record at once (pinned for "remember"), linked back to the turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreammem.text.entities import extract_entities, has_key_entity
from dreammem.types import SOURCE_CONFIDENCE, Kind, Layer, MemoryRecord, Priority, Role, Source
from dreammem.write.rules import detect_explicit

__all__ = ["TurnInput", "build_core_memory", "build_records", "source_for_role"]

_ROLE_SOURCE = {
    Role.USER: Source.USER,
    Role.ASSISTANT: Source.ASSISTANT,
    Role.TOOL: Source.TOOL,
    Role.SYSTEM: Source.ASSISTANT,
}
_ROLE_PRIORITY = {
    Role.USER: Priority.HIGH,
    Role.ASSISTANT: Priority.NORMAL,
    Role.TOOL: Priority.NORMAL,
    Role.SYSTEM: Priority.NORMAL,
}


@dataclass(frozen=True, slots=True)
class TurnInput:
    """A validated turn, ready to become records."""

    content: str
    user_id: str
    role: Role
    event_time: datetime
    session_id: str | None = None
    agent_id: str | None = None
    metadata: Mapping[str, Any] | None = None


def source_for_role(role: Role) -> Source:
    """The source a turn's record gets from who spoke it."""
    return _ROLE_SOURCE[role]


def build_records(turn: TurnInput, *, extract_explicit: bool = True, now: datetime) -> list[MemoryRecord]:
    """The episodic record of a turn, plus a semantic one when the turn is explicit.

    Returns:
        ``[episodic]`` or ``[episodic, semantic]``.
    """
    entities = extract_entities(turn.content)
    key = has_key_entity(entities)
    is_error = turn.role is Role.TOOL and turn.content.lower().startswith(("error", "traceback", "exception"))
    priority = Priority.LOW if is_error else _ROLE_PRIORITY[turn.role]
    source = source_for_role(turn.role)
    episodic = MemoryRecord(
        user_id=turn.user_id,
        content=turn.content,
        layer=Layer.EPISODIC,
        kind=Kind.TURN,
        source=source,
        role=turn.role,
        agent_id=turn.agent_id,
        session_id=turn.session_id,
        confidence=SOURCE_CONFIDENCE[source],
        importance=4 if key else 3 if turn.role is Role.USER else 2,
        priority=priority,
        created_at=now,
        event_time=turn.event_time,
        entities=tuple(e.text for e in entities),
        metadata=dict(turn.metadata or {}),
    )
    records = [episodic]
    explicit = detect_explicit(turn.content) if extract_explicit and turn.role is Role.USER else None
    if explicit is not None:
        records.append(
            _semantic(
                turn,
                kind=explicit.kind,
                importance=explicit.importance,
                pinned=explicit.pinned,
                slot=explicit.slot,
                entities=episodic.entities,
                now=now,
                provenance=(episodic.id,),
                metadata={"from_turn": episodic.id, "correction": explicit.correction},
            )
        )
    return records


def build_core_memory(
    turn: TurnInput, *, kind: Kind, now: datetime, pinned: bool = True, slot: str | None = None
) -> MemoryRecord:
    """A semantic record for ``remember(...)``.

    Pinned by default (importance 5, always recalled first); ``slot`` defaults to the
    one the explicit-memory rules read off the text.
    """
    explicit = detect_explicit(turn.content)
    return _semantic(
        turn,
        kind=kind,
        importance=5 if pinned else 4,
        pinned=pinned,
        slot=slot if slot is not None else explicit.slot if explicit else None,
        entities=tuple(e.text for e in extract_entities(turn.content)),
        now=now,
        provenance=(),
        metadata=dict(turn.metadata or {}),
    )


def _semantic(
    turn: TurnInput,
    *,
    kind: Kind,
    importance: int,
    pinned: bool,
    slot: str | None,
    entities: tuple[str, ...],
    now: datetime,
    provenance: tuple[str, ...],
    metadata: dict[str, Any],
) -> MemoryRecord:
    return MemoryRecord(
        user_id=turn.user_id,
        content=turn.content,
        layer=Layer.SEMANTIC,
        kind=kind,
        source=Source.USER_EXPLICIT,
        role=turn.role,
        agent_id=turn.agent_id,
        session_id=turn.session_id,
        confidence=SOURCE_CONFIDENCE[Source.USER_EXPLICIT],
        importance=importance,
        priority=Priority.HIGH,
        pinned=pinned,
        created_at=now,
        event_time=turn.event_time,
        provenance=provenance,
        entities=entities,
        slot=slot,
        metadata=metadata,
    )
