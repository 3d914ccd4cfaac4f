"""The speaker path (name ``speaker``): a question about a person ranks that person's own lines.

In a store written from a multi-speaker transcript, each memory may open with its
speaker's label ("Gina: I love ...", :func:`dreammem.text.speakers.speaker_label`). A
question naming a speaker ("what do Melanie's kids like?") is mostly answered by what
that person said; the other speaker's lines share the words ("kids") but are about
someone else. The path takes the candidates the paths before it found for this recall
(``RecallQuery.earlier``), orders them by their fused vote (sum of ``1 / (rrf_k +
rank)``, equal weights), and keeps the lines of the speakers the question names, so fusing it adds
one vote for those lines only.

The relation is read by rule from the text (speaker -> line); a question naming no
speaker, or a store without labels, gets ``[]`` and the path changes nothing. It is on
by default (``RecallConfig.paths``); measured in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.fusion import fused_once
from dreammem.stores.base import RecordStore
from dreammem.text.speakers import speaker_label
from dreammem.text.tokenize import contains_cjk

__all__ = ["SpeakerPath", "named_speaker", "speakers_in_question"]


def named_speaker(speaker: str, question: str) -> bool:
    """Whether the question names this (casefolded) speaker as a whole word ("Gina's" counts).

    Chinese runs words together ("小王喜欢什么？"): a Chinese name counts wherever it appears.
    """
    if contains_cjk(speaker):
        return speaker in question
    return re.search(rf"(?<!\w){re.escape(speaker)}(?!\w)", question.casefold()) is not None


def speakers_in_question(texts: Iterable[str], question: str) -> set[str]:
    """The (casefolded) speakers of these lines that the question names."""
    speakers = {speaker_label(text)[0] for text in texts}
    return {s for s in speakers if s is not None and named_speaker(s, question)}


class SpeakerPath:
    """The lines of the speakers a question names, among the other paths' candidates.

    Args:
        store: The record store (to read the candidates' text).
        sources: The paths whose candidates are considered, in their fused order.
        rrf_k: The reciprocal-rank constant of that order.
    """

    name = "speaker"

    def __init__(
        self,
        store: RecordStore,
        *,
        sources: Sequence[str] = ("keyword", "vector", "temporal"),
        rrf_k: int = 10,
    ) -> None:
        self._store = store
        self.sources = tuple(sources)
        self.rrf_k = rrf_k

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The named speakers' lines, best voted first."""
        ranked = {name: query.earlier[name] for name in self.sources if query.earlier.get(name)}
        if not ranked:
            return []
        fused = fused_once(query.searches, ranked, k=self.rrf_k)
        texts = query.searches.active_texts(self._store, query.user_id, [f.rowid for f in fused])
        out: list[Candidate] = []
        for entry in fused:
            text = texts.get(entry.rowid)
            if text is None:
                continue
            speaker, _ = speaker_label(text)
            if speaker is not None and named_speaker(speaker, query.text):
                out.append(Candidate(entry.rowid, entry.score))
        return out[: query.limit]
