"""The person and unnamed paths: a question naming a speaker, searched without the names.

In a store of several people's lines (each memory carries its speaker,
:attr:`~dreammem.types.MemoryRecord.speaker`) a question about a person ("What do
Melanie's kids like?") is answered by that person's lines, often in words the question
does not use ("they were stoked for the dinosaur exhibit"). The name itself misleads
the searches: the *other* speaker says it ("Thanks, Melanie!"), so lines that address
the person crowd out lines by the person. Both paths take the names out of the
question before they embed it:

- ``unnamed`` (:class:`UnnamedVectorPath`): the vector search of the question without
  the names, over every memory; when it answers it takes the vector path's place in
  the fusion (:data:`dreammem.recall.fusion.STANDS_IN`).
- ``person`` (:class:`PersonPath`): hop 1 person -> own lines, then a content match:
  the named speakers' own lines among the ``depth`` nearest memories to the question
  without the names (the speaker path, :mod:`dreammem.recall.speaker`, only keeps them
  among the candidates the other paths found).

The names come from the speakers of this recall's earlier candidates
(``RecallQuery.earlier``) that the question names as whole words; a question naming
no speaker, or a store without speakers, gets ``[]``. Cost, only for a question naming a
speaker: one more query embedding and one index search, shared by the two paths (both
search :data:`DEPTH` deep through ``RecallQuery.searches``). Both are on by default,
chosen by LoCoMo folds held out: ``unnamed`` at weight 1.0 in every fold, ``person`` at
0.5 in every fold (multi-hop 0.662 -> 0.683). Measured in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.earlier import active_records
from dreammem.recall.speaker import speaker_of, speakers_in_question
from dreammem.recall.vector import nearest_to_text
from dreammem.stores.base import RecordStore, VectorIndex
from dreammem.text.tokenize import query_terms

__all__ = ["DEPTH", "PersonPath", "UnnamedVectorPath", "named_speakers", "without_names"]


def named_speakers(store: RecordStore, query: RecallQuery, sources: Sequence[str]) -> list[str]:
    """The (casefolded) speakers of the earlier candidates that the question names.

    Worked out once per recall for the same earlier lists (the person and unnamed paths both ask).
    """
    lists = tuple((name, id(query.earlier.get(name))) for name in sources)
    return query.searches.once(("named speakers", lists), lambda: _named_speakers(store, query, sources))


def _named_speakers(store: RecordStore, query: RecallQuery, sources: Sequence[str]) -> list[str]:
    rowids = list(dict.fromkeys(c.rowid for name in sources for c in query.earlier.get(name, ())))
    if not rowids:
        return []
    records = active_records(query, store, rowids)
    named = speakers_in_question(records.values(), query.text)
    if not named:
        return []
    in_order = dict.fromkeys(speaker_of(records[r]) for r in rowids if r in records)
    return [s for s in in_order if s in named]


def without_names(text: str, names: Sequence[str]) -> str:
    """The text with each name (and its possessive "'s") taken out, spaces tidied."""
    for name in names:
        text = re.sub(rf"(?<!\w){re.escape(name)}(?:['’]s?)?(?!\w)", " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


DEPTH = 200
"""How deep both paths search the question without the names: the person path needs that
depth, and the unnamed path asking as deep lets one search serve the two."""


class _WithoutNames:
    """The search both paths share: the question without the speakers it names."""

    def __init__(
        self,
        store: RecordStore,
        index: VectorIndex,
        embedder: Embedder,
        *,
        depth: int = DEPTH,
        sources: Sequence[str] = ("keyword", "vector", "temporal"),
    ) -> None:
        if depth < 1:
            raise ValueError("depth must be at least 1")
        self._store = store
        self._index = index
        self._embedder = embedder
        self.depth = depth
        self.sources = tuple(sources)

    def _nearest(self, query: RecallQuery, depth: int) -> tuple[list[str], list[Candidate]]:
        """The named speakers and the ``depth`` memories nearest the question without them.

        ``[]`` when the question names no speaker, or asks nothing but the names.
        """
        names = named_speakers(self._store, query, self.sources)
        rest = without_names(query.text, names)
        if not names or not query_terms(rest):
            return names, []
        return names, nearest_to_text(self._index, self._embedder, query, rest, depth)


class PersonPath(_WithoutNames):
    """The named speakers' own lines, nearest to the question without the names.

    Args:
        store: The record store (speakers of the candidates).
        index: The vector index searched.
        embedder: Embeds the question without the names.
        depth: How many nearest memories are searched for the named speakers' lines.
        sources: The earlier paths whose candidates tell the store's speakers.
    """

    name = "person"

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The named speakers' lines, most similar to the question without the names first."""
        names, found = self._nearest(query, self.depth)
        if not found:
            return []
        records = active_records(query, self._store, [c.rowid for c in found])
        out = [c for c in found if c.rowid in records and speaker_of(records[c.rowid]) in names]
        return out[: query.limit]


class UnnamedVectorPath(_WithoutNames):
    """The vector search of a question naming speakers, done without the names.

    A question naming a speaker is embedded with the names taken out (whoever says
    them), so that lines addressing the person ("Thanks, Melanie!") stop matching by
    the name alone. When it answers, it takes the vector path's place in the fusion
    (:data:`dreammem.recall.fusion.STANDS_IN`); a question naming no speaker gets
    ``[]``, and the vector path's own list is fused as before.

    Args:
        store: The record store (speakers of the candidates).
        index: The vector index searched.
        embedder: Embeds the question without the names.
        depth: How deep it searches (it returns the first ``query.limit``); as deep as
            the person path, so that with both on one search serves the two.
        sources: The earlier paths whose candidates tell the store's speakers.
    """

    name = "unnamed"

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The nearest memories to the question without the speakers it names ([] if none)."""
        return self._nearest(query, max(self.depth, query.limit))[1][: query.limit]
