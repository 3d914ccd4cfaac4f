"""Checking what the facade's write methods are given, before anything is written."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from dreammem.config import WriteConfig
from dreammem.errors import ValidationError
from dreammem.types import Kind
from dreammem.validation import (
    check_content,
    check_event_time,
    check_id,
    check_metadata,
    check_role,
    check_speaker,
    check_user_id,
)
from dreammem.write.records import TurnInput

__all__ = ["TURN_FIELDS", "check_turns", "memory_kind", "turn_input", "turn_inputs"]

TURN_FIELDS = frozenset(
    {"content", "user_id", "session_id", "role", "speaker", "event_time", "metadata", "agent_id"}
)
"""The keys a turn given to ``add_many`` may have."""


def check_turns(turns: object) -> Iterable[Any]:
    """``turns`` as an iterable of turns (a single mapping or a string is refused)."""
    if isinstance(turns, Mapping | str | bytes) or not isinstance(turns, Iterable):
        raise ValidationError(f"turns must be an iterable of mappings, got {type(turns).__name__}")
    return turns


def turn_inputs(turns: object, now: datetime, write: WriteConfig) -> list[TurnInput]:
    """Every turn of a batch, validated, within the batch bounds (read no further than them).

    The bounds are ``write``'s: ``max_content_chars`` a turn, ``max_batch_turns`` turns
    and ``max_batch_chars`` characters of content in all.

    Raises:
        ValidationError: a bad turn, or a batch over the bounds.
    """
    max_chars, max_turns, max_total = write.max_content_chars, write.max_batch_turns, write.max_batch_chars
    inputs: list[TurnInput] = []
    total = 0
    for turn in check_turns(turns):
        if len(inputs) == max_turns:
            raise ValidationError(f"more than {max_turns:,} turns in one batch (write.max_batch_turns)")
        inputs.append(turn_input(turn, now, max_chars=max_chars))
        total += len(inputs[-1].content)
        if total > max_total:
            raise ValidationError(
                f"more than {max_total:,} characters of content in one batch (write.max_batch_chars)"
            )
    return inputs


def turn_input(turn: object, now: datetime, *, max_chars: int) -> TurnInput:
    """One turn, validated (``event_time`` defaults to ``now``)."""
    if not isinstance(turn, Mapping):
        raise ValidationError(f"each turn must be a mapping, got {type(turn).__name__}")
    unknown = set(turn) - TURN_FIELDS
    if unknown:
        raise ValidationError(f"unknown turn fields: {sorted(unknown)}")
    return TurnInput(
        content=check_content(turn.get("content"), max_chars=max_chars),
        user_id=check_user_id(turn.get("user_id")),
        role=check_role(turn.get("role", "user")),
        speaker=check_speaker(turn.get("speaker")),
        event_time=check_event_time(turn.get("event_time"), default=now),
        session_id=check_id(turn.get("session_id"), "session_id"),
        agent_id=check_id(turn.get("agent_id"), "agent_id"),
        metadata=check_metadata(turn.get("metadata"), max_chars=max_chars),
    )


def memory_kind(kind: str, pinned: object) -> Kind:
    """The kind of a memory given to ``remember``, with its ``pinned`` flag checked."""
    try:
        record_kind = Kind(kind)
    except ValueError as exc:
        raise ValidationError(f"unknown kind {kind!r}") from exc
    if record_kind is Kind.TURN:
        raise ValidationError("kind 'turn' is for conversation turns: use add()")
    if not isinstance(pinned, bool):
        raise ValidationError(f"pinned must be a bool, got {type(pinned).__name__}")
    return record_kind
