"""The speaker path (name ``speaker``): a question about a person ranks that person's own lines.

In a store written from a multi-speaker conversation (a group chat, a transcript) each
memory may carry its speaker (:attr:`~dreammem.types.MemoryRecord.speaker`, set when it
was written). A question naming a speaker ("what do Melanie's kids like?") is mostly
answered by what that person said; the other speaker's lines share the words ("kids")
but are about someone else. The path takes the candidates the paths before it found for
this recall (``RecallQuery.earlier``), orders them by their fused vote (sum of ``1 /
(rrf_k + rank)``, equal weights), and keeps the lines of the speakers the question
names, so fusing it adds one vote for those lines only.

The speaker is the record's field, never a label read out of its text; a question
naming no speaker, or a store without speakers (a user and an assistant), gets ``[]``
and the path changes nothing. It is on by default (``RecallConfig.paths``); measured in
docs/BENCHMARKS.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.earlier import EarlierLinesPath
from dreammem.text.tokenize import contains_cjk
from dreammem.types import MemoryRecord

__all__ = ["SpeakerPath", "named_speaker", "speaker_of", "speakers_in_question"]


def speaker_of(record: MemoryRecord) -> str | None:
    """The record's speaker, casefolded (None when it has none)."""
    return record.speaker.casefold() if record.speaker else None


def named_speaker(speaker: str, question: str) -> bool:
    """Whether the question names this (casefolded) speaker as a whole word ("Gina's" counts).

    Chinese runs words together ("小王喜欢什么？"): a Chinese name counts wherever it appears.
    """
    if contains_cjk(speaker):
        return speaker in question
    return re.search(rf"(?<!\w){re.escape(speaker)}(?!\w)", question.casefold()) is not None


def speakers_in_question(records: Iterable[MemoryRecord], question: str) -> set[str]:
    """The (casefolded) speakers of these records that the question names."""
    speakers = {speaker_of(record) for record in records}
    return {s for s in speakers if s is not None and named_speaker(s, question)}


class SpeakerPath(EarlierLinesPath):
    """The lines of the speakers a question names, among the other paths' candidates.

    Arguments as :class:`~dreammem.recall.earlier.EarlierLinesPath`'s.
    """

    name = "speaker"

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The named speakers' lines, best voted first."""
        out = []
        for candidate, record in self.lines(query):
            speaker = speaker_of(record)
            if speaker is not None and named_speaker(speaker, query.text):
                out.append(candidate)
        return out[: query.limit]
