"""The reply path (name ``reply``): the turns said right before and after the best matches.

In a conversation the words of a question often match the turn that *asked* it
("What did you paint?") while the answer is the next turn of the same session, said
by the other person ("A sunset over the lake"), which shares few of the words; or the
question matches an answer's follow-up and the answer came just before. The path takes
the candidates the paths before it found for this recall (``RecallQuery.earlier``),
orders them by their fused vote (sum of ``1 / (rrf_k + rank)``, equal weights, as the
speaker path does), and gives the previous and the next turn of the session of each of
the best ``seeds`` turns that seed's vote; a turn beside several strong matches leads.
Fused beside the other paths, it adds one vote for the matches' neighbours. When the
question names a speaker of these lines ("What did Omar make?"), only that speaker's
lines get a vote (the rule of :mod:`dreammem.recall.speaker`: a question about a person
is answered by what that person said, not by the other side's replies around it).

Only the lines of a named participant get a vote (:attr:`~dreammem.types.MemoryRecord.speaker`,
set at ingest: a transcript, a group chat), so the path finds nothing in a user-assistant chat
whose turns carry only their role. There a session holds one topic, every turn beside a match is
on it too, and the answer is in the user's own words: a vote for a match's neighbour there re-votes
for turns the first stage already ranked, for the session that repeats the topic most rather than
for the one that states the fact (LongMemEval: turn recall@5 0.842 with the path, 0.895 without;
LoCoMo transcripts: hit@5 0.789 with it, 0.741 without, and 0.740 when it votes only for turns the
first stage missed; docs/BENCHMARKS.md, session 23).

Only turns with a session take part (:meth:`RecordStore.session_neighbours`); a store
without sessions gets ``[]`` and the path changes nothing. The keyword path matches a
turn's previous turn too (its context column), but only by words; this path follows
the conversation both ways from whatever the other paths found (vector matches
included). A turn only this path found has no match of its own with the question, so the
relevance floor judges it by its own stored cosine (:data:`dreammem.recall.gate.BESIDE_PATHS`):
the neighbours of a relevant memory do not enter the injected block unless they are relevant
too. On by default (weight 1.0: LoCoMo held out by folds, the folds chose it in every fold);
measured in docs/BENCHMARKS.md.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.earlier import active_records
from dreammem.recall.fusion import fused_once
from dreammem.recall.speaker import speaker_of, speakers_in_question
from dreammem.stores.base import RecordStore

__all__ = ["ReplyPath", "neighbour_votes"]


def neighbour_votes(
    seeds: Sequence[int], around: dict[int, tuple[int | None, int | None]], *, rrf_k: int
) -> dict[int, float]:
    """Each neighbour's vote: the sum of ``1 / (rrf_k + rank)`` over the seeds it is next to.

    Args:
        seeds: Row ids of the seeds, best first (rank 1 first).
        around: ``(previous, next)`` row ids per seed (a seed missing here has none).
        rrf_k: The reciprocal-rank constant.
    """
    votes: dict[int, float] = {}
    for rank, seed in enumerate(seeds, 1):
        for rowid in around.get(seed, ()):
            if rowid is not None:
                votes[rowid] = votes.get(rowid, 0.0) + 1.0 / (rrf_k + rank)
    return votes


class ReplyPath:
    """The session neighbours of the other paths' best turns, best voted first.

    Args:
        store: The record store (to find the turns around each match).
        sources: The paths whose candidates are the seeds, in their fused order.
        seeds: How many of the best-voted turns lend their neighbours a vote.
        rrf_k: The reciprocal-rank constant of that order and of the votes.

    Raises:
        ValueError: ``seeds`` below 1.
    """

    name = "reply"

    def __init__(
        self,
        store: RecordStore,
        *,
        sources: Sequence[str] = ("keyword", "vector", "temporal"),
        seeds: int = 10,
        rrf_k: int = 10,
    ) -> None:
        if seeds < 1:
            raise ValueError("seeds must be at least 1")
        self._store = store
        self.sources = tuple(sources)
        self.seeds = seeds
        self.rrf_k = rrf_k

    def neighbour_seeds(self, query: RecallQuery) -> list[int]:
        """The rows whose session neighbours :meth:`search` reads: the sources' best, fused.

        Twice the seeds asked for: memories that are not session turns (a fact written from
        a turn) have no neighbours and drop out of ``around``.
        """
        ranked = {name: query.earlier[name] for name in self.sources if query.earlier.get(name)}
        if not ranked:
            return []
        return [f.rowid for f in fused_once(query.searches, ranked, k=self.rrf_k)[: 2 * self.seeds]]

    def search(self, query: RecallQuery) -> list[Candidate]:
        """The neighbours of the best seeds, best voted first (ties: the newer row first)."""
        fused = self.neighbour_seeds(query)
        if not fused:
            return []
        around = query.searches.neighbours(self._store, query.user_id, fused)
        seeds = [rowid for rowid in fused if rowid in around][: self.seeds]
        votes = neighbour_votes(seeds, around, rrf_k=self.rrf_k)
        records = active_records(query, self._store, [*seeds, *votes])
        # Adjacency is evidence between named participants only (see the module docstring).
        votes = {r: v for r, v in votes.items() if r in records and records[r].speaker}
        if named := speakers_in_question(records.values(), query.text):
            # A question about a person is answered by that person's lines (the speaker
            # path's rule): the other speaker's replies around them get no vote.
            votes = {r: v for r, v in votes.items() if r in records and speaker_of(records[r]) in named}
        if query.allowed is not None:
            votes = {rowid: v for rowid, v in votes.items() if rowid in query.allowed}
        order = sorted(votes, key=lambda rowid: (-votes[rowid], -rowid))
        return [Candidate(rowid, votes[rowid]) for rowid in order[: query.limit]]
