"""The dream report: what a dream did, with ids for everything, stored and returned."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from dreammem.dream.replacement import GuardNote

__all__ = ["Change", "Distilled", "DreamReport"]


@dataclass(frozen=True, slots=True)
class Distilled:
    """A record a dream wrote, and the records it stands for.

    Attributes:
        id: The new record's id.
        kind: ``pattern``, ``summary`` (or ``merge`` in a second-level dream).
        content: Its text.
        sources: Ids of the records it was distilled from.
        status: ``active``, or ``superseded`` when a newer value already existed.
    """

    id: str
    kind: str
    content: str
    sources: tuple[str, ...]
    status: str = "active"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "id": self.id,
            "kind": self.kind,
            "content": self.content,
            "sources": list(self.sources),
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class Change:
    """A record a dream changed: archived, superseded, migrated or merged.

    Attributes:
        id: The changed record.
        to: The record that now carries what it said (if any).
        reason: Why.
    """

    id: str
    to: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {"id": self.id, "to": self.to, "reason": self.reason}


_CHANGE_LISTS = ("archived", "superseded", "migrated", "merged")


@dataclass(frozen=True, slots=True)
class DreamReport:
    """What one dream did.

    Attributes:
        dream_id: Its id (``dreammem dream undo DREAM_ID``).
        user_id: Whose memory it consolidated.
        level: 1 for a dream over the queue, 2 for the second-level dream.
        trigger: What started it (``on_demand``, ``queue_limit``, ``interval``, ...).
        dry_run: True when nothing was written.
        mode: ``rules``, ``llm``, or ``llm-degraded`` (the LLM failed somewhere and
            rules took over there; see ``degraded``).
        started_at: ISO time it started.
        finished_at: ISO time it finished.
        duration_seconds: Wall time.
        queued: How many queued records it consumed.
        left_queued: Queued records it left for the next dream (over ``dream.max_records``).
        kept: Records kept in full.
        distilled: New records (patterns, summaries) with their sources.
        archived: Records archived (out of recall, kept for audit).
        superseded: Records superseded by a newer value.
        migrated: Turns whose content a semantic record already holds.
        merged: Duplicates merged into another record (second level).
        guard_kept: Records the verbatim guard kept, and what they would have lost.
        skipped: Queued records that were no longer active (nothing to do).
        llm: LLM calls, tokens and failures.
        degraded: Where and why rules replaced the LLM.
    """

    dream_id: str
    user_id: str
    level: int
    trigger: str
    dry_run: bool
    mode: str
    started_at: str
    finished_at: str
    duration_seconds: float
    queued: int = 0
    left_queued: int = 0
    kept: tuple[str, ...] = ()
    distilled: tuple[Distilled, ...] = ()
    archived: tuple[Change, ...] = ()
    superseded: tuple[Change, ...] = ()
    migrated: tuple[Change, ...] = ()
    merged: tuple[Change, ...] = ()
    guard_kept: tuple[GuardNote, ...] = ()
    skipped: tuple[str, ...] = ()
    llm: dict[str, Any] = field(default_factory=dict)
    degraded: tuple[str, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """How many records each outcome touched."""
        patterns = [d for d in self.distilled if d.kind == "pattern"]
        summaries = [d for d in self.distilled if d.kind == "summary"]
        return {
            "queued": self.queued,
            "kept": len(self.kept),
            "compressed": sum(len(d.sources) for d in summaries),
            "summaries": len(summaries),
            "patterns": len(patterns),
            "merged": sum(len(d.sources) for d in patterns) + len(self.merged),
            "migrated": len(self.migrated),
            "superseded": len(self.superseded),
            "archived": len(self.archived),
            "guard_kept": len(self.guard_kept),
            "skipped": len(self.skipped),
            "new_records": len(self.distilled),
            "llm_calls": int(self.llm.get("calls", 0)),
            "llm_tokens": int(self.llm.get("tokens", 0)),
        }

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (``from_dict`` reads it back)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, tuple):
                value = [v.to_dict() if hasattr(v, "to_dict") else v for v in value]
            out[f.name] = value
        out["counts"] = self.counts
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DreamReport:
        """Read back a dict made by :meth:`to_dict`."""
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        values["kept"] = tuple(values.get("kept", ()))
        values["skipped"] = tuple(values.get("skipped", ()))
        values["degraded"] = tuple(values.get("degraded", ()))
        values["distilled"] = tuple(
            Distilled(d["id"], d["kind"], d["content"], tuple(d["sources"]), d.get("status", "active"))
            for d in values.get("distilled", ())
        )
        for name in _CHANGE_LISTS:
            values[name] = tuple(Change(c["id"], c["to"], c["reason"]) for c in values.get(name, ()))
        values["guard_kept"] = tuple(
            GuardNote(g["record_id"], g["stage"], tuple(g["missing"])) for g in values.get("guard_kept", ())
        )
        return cls(**values)
