"""Turning one conversation turn into the records the write path stores.

Pure functions: no I/O. Every turn becomes an episodic record; a user turn with an
explicit preference, constraint, correction or "remember this" also becomes a
semantic record at once (pinned for "remember"), linked back to the turn.

Only the user's own words can become a pinned memory, a preference or a constraint.
A turn of another role (a tool result, a retrieved document, the assistant) stays an
episodic record whatever it says, and one that reads like an instruction is flagged
(``system["suspect_instruction"]``, see :mod:`dreammem.write.instructions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from dreammem.system_meta import SystemMeta
from dreammem.text.entities import extract_entities, has_key_entity
from dreammem.types import SOURCE_CONFIDENCE, Kind, Layer, MemoryRecord, Priority, Role, Source
from dreammem.write.instructions import SUSPECT_KEY, looks_like_instruction
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
    """A validated turn, ready to become records.

    ``system`` holds notes a layer of the library gives the turn's record (an adapter
    message's key, a keyed entry): never from a caller's input.
    """

    content: str
    user_id: str
    role: Role
    event_time: datetime
    session_id: str | None = None
    agent_id: str | None = None
    metadata: Mapping[str, Any] | None = None
    speaker: str | None = None
    system: SystemMeta = field(default_factory=lambda: SystemMeta())


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
        speaker=turn.speaker,
        agent_id=turn.agent_id,
        session_id=turn.session_id,
        confidence=SOURCE_CONFIDENCE[source],
        importance=4 if key else 3 if turn.role is Role.USER else 2,
        priority=priority,
        created_at=now,
        event_time=turn.event_time,
        entities=tuple(e.text for e in entities),
        metadata=dict(turn.metadata or {}),
        system=_flagged(turn),
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
                system={"from_turn": episodic.id, "correction": explicit.correction},
            )
        )
    return records


_USER_ONLY_KINDS = frozenset({Kind.PREFERENCE, Kind.CONSTRAINT})


def _flagged(turn: TurnInput) -> SystemMeta:
    """The turn's own notes, with the instruction flag when a non-user turn reads like one."""
    if turn.role is not Role.USER and looks_like_instruction(turn.content):
        return {**turn.system, SUSPECT_KEY: True}
    return turn.system.copy()


def build_core_memory(
    turn: TurnInput,
    *,
    kind: Kind,
    now: datetime,
    pinned: bool = True,
    slot: str | None = None,
    allow_non_user_pins: bool = False,
) -> MemoryRecord:
    """A semantic record for ``remember(...)``.

    Pinned by default (importance 5, always recalled first); ``slot`` defaults to the
    one the explicit-memory rules read off the text. What another role than the user
    asks to remember is kept as an unpinned fact with that role's source: only the
    user states preferences and sets constraints; what another role asks to pin is
    stored unpinned, unless the store opts in (``allow_non_user_pins``, from
    ``WriteConfig``) and the text does not read like an instruction.
    """
    if turn.role is not Role.USER:
        source = source_for_role(turn.role)
        system = _flagged(turn)
        pin = pinned and allow_non_user_pins and not system.get(SUSPECT_KEY, False)
        record = _semantic(
            turn,
            kind=Kind.FACT if kind in _USER_ONLY_KINDS else kind,
            importance=5 if pin else 3,
            pinned=pin,
            slot=None,
            entities=tuple(e.text for e in extract_entities(turn.content)),
            now=now,
            provenance=(),
            metadata=dict(turn.metadata or {}),
            system=system,
        )
        return replace(record, source=source, confidence=SOURCE_CONFIDENCE[source], priority=Priority.NORMAL)
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
        system=_flagged(turn),
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
    metadata: dict[str, Any] | None = None,
    system: SystemMeta,
) -> MemoryRecord:
    return MemoryRecord(
        user_id=turn.user_id,
        content=turn.content,
        layer=Layer.SEMANTIC,
        kind=kind,
        source=Source.USER_EXPLICIT,
        role=turn.role,
        speaker=turn.speaker,
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
        metadata=metadata or {},
        system=system,
    )
