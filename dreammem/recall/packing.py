"""Rendering recalled memories into one delimited prompt block under a token budget.

The block looks like::

    <memory>
    [pinned] (2024-05-01) The user prefers Excel reports. {id=3f2a…}
    ...
    </memory>

Memory text is escaped so it can never close or forge the block's tags: ``<`` and
``>`` become ``‹`` and ``›`` inside memories. Pinned memories come first, then by
score; memories that do not fit the budget are left out and reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from dreammem.recall.result import Hit
from dreammem.text.tokens import ApproximateTokenCounter, TokenCounter

__all__ = ["PackedContext", "escape_memory_text", "pack_hits"]

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


def escape_memory_text(text: str) -> str:
    """Make memory text unable to open or close tags in the prompt block."""
    return " ".join(text.replace("<", "‹").replace(">", "›").split())


def _line(hit: Hit) -> str:
    record = hit.record
    tag = "[pinned] " if record.pinned else ""
    when = record.event_time.date().isoformat()
    return f"- {tag}({when}) {escape_memory_text(record.content)}"


def pack_hits(hits: Sequence[Hit], *, max_tokens: int, counter: TokenCounter | None = None) -> PackedContext:
    """Render hits, pinned first, then by score, until the token budget is spent."""
    count = counter or ApproximateTokenCounter()
    ordered = sorted(hits, key=lambda h: (not h.record.pinned, -h.score))
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
