"""Rendering recalled memories into one delimited prompt block under a token budget.

The block looks like::

    <memory>
    - (2024-05-03 09:12 UTC) user said: From now on I want PDF reports.
    - [earlier, possibly outdated] (2024-04-28 16:40 UTC) user said: I prefer Excel reports.
    - (2024-04-28 16:45 UTC) tool returned: Order #48213 ships on 2024-07-15.
    - [pinned] (2024-04-01 08:00 UTC) user said: Always answer in English.
    </memory>

Memories come in recall order (:class:`~dreammem.recall.result.RecallResult`: ranked
hits, newest first among versions of the same subject, then core memories); each
carries its date and time (UTC) and where it came from (:func:`provenance`), so the
model can weigh what a tool returned against what the user said. An older memory that
a newer active one may have replaced is marked ``[earlier, possibly outdated]``. Memory
text is escaped by :func:`~dreammem.text.escape.escape_memory_text`: it can never close
or forge the block's tags, hide invisible characters, or start a line of its own.
Memories that do not fit the budget are left out and reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from dreammem.text.escape import escape_memory_text
from dreammem.text.tokens import ApproximateTokenCounter, TokenCounter
from dreammem.types import MemoryRecord, Role, Source
from dreammem.write.instructions import SUSPECT_KEY

if TYPE_CHECKING:  # result.py builds packed blocks with this module
    from dreammem.recall.result import Hit

__all__ = [
    "OUTDATED_TAG",
    "PackedContext",
    "escape_memory_text",
    "format_when",
    "hit_label",
    "pack_hits",
    "provenance",
]

OPEN_TAG = "<memory>"
CLOSE_TAG = "</memory>"


@dataclass(frozen=True, slots=True)
class PackedContext:
    """A rendered memory block and what was left out.

    Attributes:
        text: The block (empty string when nothing fits or nothing was recalled).
        included: Trace ids of the memories in the block, in order.
        dropped: Trace ids of the memories left out for the budget.
        tokens: The block's token count.
    """

    text: str
    included: tuple[str, ...]
    dropped: tuple[str, ...]
    tokens: int

    def __str__(self) -> str:
        return self.text


_SOURCE_LABEL = {
    Source.USER_EXPLICIT: "user said",
    Source.USER: "user said",
    Source.ASSISTANT: "assistant said",
    Source.TOOL: "tool returned",
    Source.DISTILLED: "dream summary",
    Source.EXTRACTED: "inferred",
    Source.INFERRED: "inferred",
}

_SUMMARY_OF = {Role.TOOL: "tool output", Role.ASSISTANT: "assistant turns", Role.SYSTEM: "system turns"}


def provenance(record: MemoryRecord) -> str:
    """Where a memory came from, in words: "user said", "assistant said", "tool returned", ...

    A system turn (stored with the assistant's source) says "system said"; a dream
    summary of non-user turns says whose ("dream summary of tool output"); a record
    flagged as instruction-like says so too.
    """
    if record.role is Role.SYSTEM and record.source is Source.ASSISTANT:
        label = "system said"
    elif record.source is Source.DISTILLED and record.role in _SUMMARY_OF:
        label = f"dream summary of {_SUMMARY_OF[record.role]}"
    else:
        label = _SOURCE_LABEL[record.source]
    if record.system.get(SUSPECT_KEY) is True:
        label += " (instruction-like, not from the user)"
    return label


def format_when(when: datetime) -> str:
    """A memory's time as shown to the model: date and time to the minute, in UTC."""
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")


OUTDATED_TAG = "earlier, possibly outdated"
"""The tag of a hit a newer active memory may have replaced (:attr:`Hit.outdated_by`)."""


def hit_label(hit: Hit) -> str:
    """A hit's tags and time: ``"[pinned] (2024-05-01 08:00 UTC)"``."""
    record = hit.record
    tags = [t for t, on in (("pinned", record.pinned), (OUTDATED_TAG, hit.outdated_by)) if on]
    tag = f"[{'; '.join(tags)}] " if tags else ""
    return f"{tag}({format_when(record.event_time)})"


def _line(hit: Hit) -> str:
    return f"- {hit_label(hit)} {provenance(hit.record)}: {escape_memory_text(hit.record.content)}"


def pack_hits(hits: Sequence[Hit], *, max_tokens: int, counter: TokenCounter | None = None) -> PackedContext:
    """Render hits in the order given until the token budget is spent."""
    count = counter or ApproximateTokenCounter()
    ordered = list(hits)
    frame = count(f"{OPEN_TAG}\n\n{CLOSE_TAG}")
    used = frame
    lines: list[str] = []
    included: list[str] = []
    dropped: list[str] = []
    for hit in ordered:
        line = _line(hit)
        cost = count(line) + 1
        if used + cost > max_tokens:
            dropped.append(hit.record.id)
            continue
        lines.append(line)
        included.append(hit.record.id)
        used += cost
    if not lines:
        return PackedContext("", (), tuple(dropped), 0)
    text = "\n".join([OPEN_TAG, *lines, CLOSE_TAG])
    return PackedContext(text, tuple(included), tuple(dropped), count(text))
