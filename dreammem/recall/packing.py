"""Rendering recalled memories into one delimited prompt block under a token budget.

The block looks like::

    <memory>
    - [pinned] (2024-05-01) The user prefers Excel reports.
    - (2024-04-28) Order #48213 ships on 2024-07-15.
    </memory>

Memory text is escaped so it can never close or forge the block's tags: ``<`` and
``>`` (and look-alikes that normalise to them) become ``‹`` and ``›`` inside
memories, and line breaks collapse so every memory is one line of the block.
Pinned memories come first, then by score; memories that do not fit the budget are
left out and reported.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dreammem.text.tokens import ApproximateTokenCounter, TokenCounter

if TYPE_CHECKING:  # result.py builds packed blocks with this module
    from dreammem.recall.result import Hit

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


_ANGLE = str.maketrans({"<": "‹", ">": "›", "＜": "‹", "＞": "›", "﹤": "‹", "﹥": "›"})
_INVISIBLE = re.compile(r"[\x00-\x08\x0e-\x1b\x7f\u200b\u202a-\u202e\u2066-\u2069\ufeff]")


def escape_memory_text(text: str) -> str:
    """Make memory text unable to open or close tags in the prompt block.

    Angle brackets (and their full-width and small forms, which normalise to ``<``
    and ``>``) become ``‹`` and ``›``; control and bidirectional-override characters
    are removed; all whitespace, line breaks included, collapses to single spaces, so
    a memory stays on its own line.
    """
    return " ".join(_INVISIBLE.sub("", text.translate(_ANGLE)).split())


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
