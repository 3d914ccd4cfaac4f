"""Speaker labels of transcript lines ("Gina: I love ...").

A memory written from a multi-speaker transcript (a group chat, meeting notes, a
conversation log) often opens with who said it. The label is not part of what is said:
the write path reads the statement after it, and the speaker recall path uses it as the
line's person ("what does Gina like?" asks about Gina's own lines).
"""

from __future__ import annotations

import re

__all__ = ["speaker_label"]

# One or two capitalised words and a colon at the start: "Gina: ...", "Mary Ann: ...".
_SPEAKER = re.compile(r"^\s*([A-Z][\w'’-]+(?: [A-Z][\w'’-]+)?):\s+(?=\S)")
# Words that head a line without naming a speaker.
_NOT_SPEAKERS = frozenset(
    "note notes update updates correction reminder fyi ps re edit todo important warning question answer "
    "summary status btw also tip tips heads info news today tomorrow yesterday tonight "
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december step goal plan agenda subject topic result results".split()
)


def speaker_label(text: str) -> tuple[str | None, str]:
    """The speaker of a transcript line (casefolded) and the words after the label.

    Header words ("Correction: ...", "Note: ...", "Monday: ...") are not speakers.
    Without a label: ``(None, text)``.
    """
    m = _SPEAKER.match(text)
    if m is None or m.group(1).casefold() in _NOT_SPEAKERS:
        return None, text
    return m.group(1).casefold(), text[m.end() :]
