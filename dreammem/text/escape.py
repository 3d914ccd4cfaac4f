"""Making memory text safe to show a model: one escaping rule for prompt blocks and tool results.

Memory text is data, written by users, assistants and tools. Before it reaches a
prompt or a tool result it is neutralised so that it cannot hide text from a human
reviewer or forge the frame around it:

* invisible characters are removed: C0 and C1 controls (U+009B, the one-byte CSI, among
  them), every Unicode format character (zero-width space, ZWNJ, ZWJ, word joiner, soft
  hyphen, LRM, RLM, ALM, bidi embeddings, overrides and isolates, the BOM, the tag
  characters U+E0000-E007F used to smuggle hidden instructions), variation selectors
  (another byte-smuggling channel), the combining grapheme joiner and the Hangul fillers;
* angle brackets and their full-width and small look-alikes become ``‹`` and ``›``, so a
  memory can never open or close a tag such as ``</memory>``;
* all whitespace, line and paragraph separators included, collapses to single spaces, so
  a memory is always one line and cannot forge another line of the block or of a tool's
  result list.
"""

from __future__ import annotations

import re

__all__ = ["escape_memory_text", "remove_invisible"]

_ANGLE = str.maketrans({"<": "‹", ">": "›", "＜": "‹", "＞": "›", "﹤": "‹", "﹥": "›"})

# Whitespace controls (\t \n \v \f \r, \x1c-\x1f, U+0085) are left for the whitespace
# collapse, so that words they separate stay separate.
_INVISIBLE = re.compile(
    "["
    "\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"  # C0 and C1 controls, DEL
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f"  # soft hyphen, CGJ, ALM, fillers
    "\u0600-\u0605\u06dd\u070f\u0890\u0891\u08e2"  # Arabic and Syriac format marks
    "\u200b-\u200f\u202a-\u202e\u2060-\u206f"  # zero-width, LRM/RLM, bidi, word joiner
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufffb"  # Hangul filler, variation selectors, BOM
    "\U000110bd\U000110cd\U00013430-\U0001345f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff"  # tag characters and variation selectors supplement
    "]"
)


def remove_invisible(text: str) -> str:
    """The text without controls, format characters and other invisible code points.

    Line breaks and other whitespace are kept: this is for text shown as a whole
    (a retrieved document), not for one line of a block.
    """
    return _INVISIBLE.sub("", text)


def escape_memory_text(text: str) -> str:
    """Make memory text unable to hide characters, open or close tags, or start a new line.

    Invisible characters are removed; angle brackets (and their full-width and small
    forms, which normalise to ``<`` and ``>``) become ``‹`` and ``›``; all whitespace,
    line breaks included, collapses to single spaces.
    """
    return " ".join(remove_invisible(text.translate(_ANGLE)).split())
