"""A distilled record and the sources it replaces, checked by the verbatim guard.

Summaries, patterns and second-level merges all produce a :class:`Replacement`: one
new (or surviving) record standing in for several sources. :func:`guarded` applies
the verbatim guard: a source whose protected tokens are not all in the new content is
kept as it is, and a new content carrying a number none of its sources has is
rejected outright.

Provenance survives the replacement: a record distilled from any non-user source
(a tool result, an assistant or system turn) takes that source's role, is never pinned
and never a preference or constraint, and carries the "instruction-like, not from the
user" flag (:data:`~dreammem.write.instructions.SUSPECT_KEY`) when any source did or
when its own text reads like an instruction.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from dreammem.dream.guard import invented_numbers, missing_tokens
from dreammem.system_meta import SystemMeta
from dreammem.types import SOURCE_CONFIDENCE, Kind, Layer, MemoryRecord, Priority, Role, Source
from dreammem.write.instructions import SUSPECT_KEY, looks_like_instruction

__all__ = ["GuardNote", "Replacement", "distilled_record", "guarded", "normalize_text", "speaker_role"]

_SOURCE_ROLE = {Source.TOOL: Role.TOOL, Source.ASSISTANT: Role.ASSISTANT}
_USER_ONLY_KINDS = frozenset({Kind.PREFERENCE, Kind.CONSTRAINT})


@dataclass(frozen=True, slots=True)
class GuardNote:
    """A source the guard kept: what would have replaced it and what it would have lost."""

    record_id: str
    stage: str
    missing: tuple[str, ...]

    def to_dict(self) -> dict[str, object]:
        """A JSON-friendly dict."""
        return {"record_id": self.record_id, "stage": self.stage, "missing": list(self.missing)}


@dataclass(frozen=True, slots=True)
class Replacement:
    """A distilled record standing in for the sources it replaces.

    Attributes:
        record: The new record.
        replaces: Active sources archived in its favour.
        sources: Everything it was distilled from (its provenance).
    """

    record: MemoryRecord
    replaces: tuple[MemoryRecord, ...]
    sources: tuple[MemoryRecord, ...]


def guarded(
    content: str, sources: Sequence[MemoryRecord], stage: str
) -> tuple[list[MemoryRecord], list[GuardNote], tuple[str, ...]]:
    """Split sources into those ``content`` may replace and those the guard keeps.

    Returns:
        ``(replaceable, notes, invented)``: when ``invented`` is not empty the content
        made up numbers and must not be used at all (``replaceable`` is then empty).
    """
    invented = invented_numbers(content, [s.content for s in sources])
    if invented:
        return [], [], invented
    ok: list[MemoryRecord] = []
    notes: list[GuardNote] = []
    for source in sources:
        lost = missing_tokens(source.content, content)
        if lost:
            notes.append(GuardNote(source.id, stage, lost))
        else:
            ok.append(source)
    return ok, notes, ()


def normalize_text(text: str) -> str:
    """Text normalised for duplicate detection: NFKC, casefolded, punctuation and spacing dropped."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    kept = "".join(c if c.isalnum() else " " for c in folded)
    return " ".join(kept.split())


def speaker_role(record: MemoryRecord) -> Role:
    """Who a record's words come from: its role, else what its source says (a summary of the user: user)."""
    if record.role is not None:
        return record.role
    return _SOURCE_ROLE.get(record.source, Role.USER)


def _non_user_role(sources: Sequence[MemoryRecord]) -> Role | None:
    """The first non-user role among the sources (None: every source is the user's own words)."""
    return next((r for r in map(speaker_role, sources) if r is not Role.USER), None)


def distilled_record(
    content: str,
    sources: Sequence[MemoryRecord],
    *,
    layer: Layer,
    kind: Kind,
    importance: int,
    now: datetime,
    system: SystemMeta,
    slot: str | None = None,
    pinned: bool = False,
) -> MemoryRecord:
    """A new record distilled from ``sources`` (provenance = their ids, time = the newest).

    It expires (``metadata["expires_at"]``) only when every source does, with the last.
    Derived from any non-user source, it keeps that role and is never a claim of the
    user's (see the module docstring).
    """
    newest = max(sources, key=lambda s: s.event_time)
    expiries = [s.metadata.get("expires_at") for s in sources]
    metadata: dict[str, Any] = {}
    if all(isinstance(e, str) for e in expiries):
        # What it stands for all expires: so does it, with the last of them.
        metadata["expires_at"] = max(str(e) for e in expiries)
    role = _non_user_role(sources)
    if role is not None:
        pinned = False
        kind = Kind.FACT if kind in _USER_ONLY_KINDS else kind
        if any(s.system.get(SUSPECT_KEY) is True for s in sources) or looks_like_instruction(content):
            system = {**system, SUSPECT_KEY: True}
    return MemoryRecord(
        user_id=newest.user_id,
        content=content,
        layer=layer,
        kind=kind,
        source=Source.DISTILLED,
        role=role,
        agent_id=newest.agent_id,
        session_id=newest.session_id,
        # Consolidation never raises confidence: a distillate is as sure as its least sure source.
        confidence=min([SOURCE_CONFIDENCE[Source.DISTILLED], *(s.confidence for s in sources)]),
        importance=max(1, min(5, importance)),
        priority=Priority.HIGH if importance >= 4 else Priority.NORMAL,
        pinned=pinned,
        created_at=now,
        event_time=newest.event_time,
        provenance=tuple(s.id for s in sources),
        # The sources' entities that the content carries (no second entity pass).
        entities=tuple(dict.fromkeys(e for s in sources for e in s.entities if e in content)),
        slot=slot,
        metadata=metadata,
        system=system,
    )
