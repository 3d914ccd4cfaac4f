"""What each MCP tool returns: pydantic models, published as the tools' output schemas.

Records travel as :meth:`~dreammem.types.MemoryRecord.to_dict` dicts; a recall carries
the escaped ``<memory>`` block the adapters inject into prompts
(:func:`~dreammem.agent_api.with_memory_block`) and each hit's id, date, source and role
(:func:`~dreammem.agent_api.hit_metadata`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, Field

from dreammem.agent_api import MEMORY_PROMPT_HEADER, hit_metadata, with_memory_block
from dreammem.crud import MemoryPage, PurgeResult
from dreammem.dream.report import DreamReport
from dreammem.recall.result import RecallResult
from dreammem.types import MemoryRecord

__all__ = [
    "NO_MEMORIES",
    "Dreamed",
    "ErrorOutput",
    "History",
    "Page",
    "Purged",
    "Recalled",
    "RecordOutput",
    "Saved",
]

NO_MEMORIES = "No memories found."
"""The block's text when a recall found nothing."""


class Saved(BaseModel):
    """A memory just written (``remember``, ``add``)."""

    id: str = Field(description="The memory's id: give it to get, history, update, forget, purge.")
    layer: str
    kind: str
    pinned: bool
    text: str = Field(description="What the tool told the model.")

    @classmethod
    def of(cls, record: MemoryRecord, text: str) -> Saved:
        """The output for a stored record."""
        return cls(
            id=record.id, layer=record.layer.value, kind=record.kind.value, pinned=record.pinned, text=text
        )


class Recalled(BaseModel):
    """What a recall found."""

    block: str = Field(
        description=f"The memories as one escaped <memory> block under the line {MEMORY_PROMPT_HEADER!r}, "
        f"ready for a prompt; {NO_MEMORIES!r} when nothing was found."
    )
    hits: list[dict[str, Any]] = Field(
        description="One per memory, in block order: id, content, event_time (the date), source "
        "('user said', 'tool returned', ...), role, layer, kind, score and the recall trace."
    )
    dropped: list[str] = Field(description="Ids of hits left out of the block by its token budget.")
    degraded: dict[str, str] = Field(description="Recall paths that failed, with the reason.")

    @classmethod
    def of(cls, result: RecallResult) -> Recalled:
        """The output for a recall result (the block under the configured token budget)."""
        packed = result.to_context()
        block = with_memory_block(None, packed if packed.text else None) or NO_MEMORIES
        return cls(
            block=block,
            hits=hit_metadata(result),
            dropped=list(packed.dropped),
            degraded=dict(result.degraded),
        )


class RecordOutput(BaseModel):
    """One memory, every field (``get``, ``update``, ``forget``)."""

    record: dict[str, Any]

    @classmethod
    def of(cls, record: MemoryRecord) -> RecordOutput:
        """The output for one record."""
        return cls(record=record.to_dict())


class Page(BaseModel):
    """One page of a user's memories, newest first (``list``)."""

    records: list[dict[str, Any]]
    twins: dict[str, str] = Field(description="Listed id -> the id of its twin (the same memory twice).")
    next_offset: int | None = Field(description="The offset of the next page; null on the last one.")

    @classmethod
    def of(cls, page: MemoryPage) -> Page:
        """The output for a page of records."""
        return cls(records=[r.to_dict() for r in page], twins=dict(page.twins), next_offset=page.next_offset)


class History(BaseModel):
    """Every version of a memory, oldest first (``history``)."""

    versions: list[dict[str, Any]]

    @classmethod
    def of(cls, chain: list[MemoryRecord]) -> History:
        """The output for a history chain."""
        return cls(versions=[r.to_dict() for r in chain])


class Purged(BaseModel):
    """What an erasure removed, or would remove with ``dry_run`` (``purge``)."""

    purged: list[str]
    restored: list[str]
    dreams_scrubbed: int
    graph_pending: int
    compacted: bool
    dry_run: bool

    @classmethod
    def of(cls, result: PurgeResult) -> Purged:
        """The output for a purge result."""
        return cls.model_validate(dataclasses.asdict(result))


class Dreamed(BaseModel):
    """A dream's report (``dream``)."""

    report: dict[str, Any]

    @classmethod
    def of(cls, report: DreamReport) -> Dreamed:
        """The output for a dream report."""
        return cls(report=report.to_dict())


class ErrorOutput(BaseModel):
    """A tool's typed failure: the DreamMem error class, its message, whether a retry may help."""

    error: str = Field(description="The error class: ValidationError, NotFoundError, ScopeError, ...")
    message: str
    retryable: bool
