"""Small transcript stores for the tests of the paths that read the speakers of lines."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.text.speakers import speaker_label

T0 = datetime(2025, 6, 1, 18, 0, tzinfo=UTC)
"""When the first line was said (a minute between lines); questions are asked a day later."""


def said_by(line: str) -> str | None:
    """The speaker a test line is written with: the name its label gives ("Priya: ..."), if any."""
    return speaker_label(line)[0]


def transcript_memory(lines: Sequence[str], other_user_line: str, paths: tuple[str, ...]) -> DreamMemory:
    """An in-memory store: ``lines`` as one session of user ``u1``, ``other_user_line`` for ``u2``.

    Each line is written with its speaker (:func:`said_by`), as a transcript's writer knows it.
    """
    config = DreamMemConfig(recall=RecallConfig(paths=paths))
    memory = DreamMemory(None, embedder=HashingEmbedder(), config=config)
    memory.add_many(
        [
            {
                "content": line,
                "user_id": "u1",
                "session_id": "s1",
                "speaker": said_by(line),
                "event_time": T0 + timedelta(minutes=i),
            }
            for i, line in enumerate(lines)
        ]
    )
    memory.add(other_user_line, user_id="u2", speaker=said_by(other_user_line), event_time=T0)
    return memory


def keyword_query(
    memory: DreamMemory, text: str, user: str = "u1", *, after: timedelta = timedelta(days=1)
) -> RecallQuery:
    """The question, ``after`` :data:`T0`, carrying the keyword path's candidates as ``earlier``."""
    query = RecallQuery(text, user, 30, T0 + after)
    return dataclasses.replace(query, earlier={"keyword": memory.pipeline.paths["keyword"].search(query)})


def contents(memory: DreamMemory, found: list[Candidate], user: str = "u1") -> list[str]:
    """The texts of the candidates, in their order."""
    records = memory.store.get_by_rowids(user, [c.rowid for c in found])
    return [records[c.rowid].content for c in found]
