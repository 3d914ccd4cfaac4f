"""The temporal path: what the query says about time, applied to event times.

The query is read by :func:`~dreammem.dates.parse.parse_time_query` (dateparser
plus a small rule layer) relative to ``RecallQuery.now``. Then:

* a **window** ("yesterday", "in May 2023", "上周", "before 2023-05-07"): the user's
  memories whose ``event_time`` falls inside it, ranked by how well they match the
  rest of the query (vector similarity restricted to the window, fused by reciprocal
  rank with BM25 restricted to the window). A bare date filter in time order would
  return every memory of the day; this ranks the ones the query is about first. When
  the question names no topic besides the window ("what did we do yesterday?") its
  memories are relevant by time (``Candidate.timed``: the relevance floor lets them
  pass); with a topic they are judged by content like any other hit.
  Memories said outside the window whose own relative dates point into it ("we went
  camping last summer", said in November) join it (:mod:`dreammem.dates.grounding`).
* an **event anchor** ("before the trip to Paris", "去日本之前"): the best match for the
  anchor gives a time, which opens a window before or after it.
* an **order** ("last time", "recently", "上次" / "first time"): the best content
  matches, newest (or oldest) first, so the most recent matching session leads.
  Content matches over the whole scope reuse what the vector and keyword paths found
  for this recall when they ran first (no second search). With no topic at all
  ("what did we talk about last time?", "上次我们聊了什么") it is the newest (oldest)
  conversation other than the current one, as *sole* candidates: content matches for
  "talk" would only find memories that mention talking.
* a **when-question** with no window ("when did we ...", "什么时候"): the best content
  matches that themselves mention a time ("yesterday", "last week", "on 7 May"),
  since those are the memories that date the event.

A query that says nothing about time returns ``[]`` after one regular-expression
check, so the path costs nothing then.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta

import numpy as np
import numpy.typing as npt

from dreammem.dates.grounding import GROUNDING_REACH, GroundedTimes
from dreammem.dates.parse import TimeQuery, TimeWindow, mentions_time, parse_time_query
from dreammem.embed.base import Embedder
from dreammem.recall.base import Candidate, RecallQuery
from dreammem.recall.fusion import Fused, reciprocal_rank_fusion
from dreammem.stores.base import RecordStore, VectorIndex
from dreammem.text.tokenize import query_terms

__all__ = ["TemporalPath"]

log = logging.getLogger(__name__)


class TemporalPath:
    """Time-aware recall over ``event_time``, scoped to the user.

    Args:
        store: The record store (event times, windowed BM25).
        index: The vector index (similarity inside a window).
        embedder: Embeds an event anchor ("before <anchor>") when the query has one.
        max_window: Most memories of one window considered (those nearest the
            reference side of the window are kept; the window's keyword search is not
            capped). 2,000 holds a LoCoMo conversation several times over; at 100k
            memories a month holds ~5,500, and 5,000 cost the recall's p95 2 ms more.
        order_pool: How many best content matches an ordering query ("last time")
            sorts by time.
        order_margin: With no match found by both vector and keyword search, the
            vector matches within this cosine of the best one count as strong.
        order_scan: How many newest memories a topic-free "last time" looks through
            for the previous conversation.
    """

    name = "temporal"

    def __init__(
        self,
        store: RecordStore,
        index: VectorIndex,
        embedder: Embedder,
        *,
        max_window: int = 2000,
        order_pool: int = 10,
        order_margin: float = 0.05,
        order_scan: int = 200,
    ) -> None:
        self._store = store
        self._index = index
        self._embedder = embedder
        self.max_window = max_window
        self.order_pool = order_pool
        self.order_margin = order_margin
        self.order_scan = order_scan
        self._grounded = GroundedTimes(store)

    def prepare(self, query: RecallQuery) -> None:
        """The reads :meth:`search` makes without the query embedding, held in ``query.searches``.

        The query read, and for a window (with no event anchor) the window's rows, the rows
        pointing into it and its keyword matches. The pipeline calls this beside the query
        encoder; :meth:`search` then finds them held (and reads them itself when not).
        """
        parsed = self._parsed(query)
        if parsed is None or parsed.anchor is not None or parsed.window is None or parsed.window.empty:
            return
        self._window_reads(query, query_terms(parsed.content), parsed.window, query.limit)

    def search(self, query: RecallQuery) -> list[Candidate]:
        """Memories the query's time expressions point at, best first ([] without any)."""
        parsed = self._parsed(query)
        if parsed is None:
            return []
        log.debug("temporal query: %s", parsed)
        window = self._resolve_anchor(query, parsed)
        if window is not None and window.empty:
            return []
        embedding = self._embedding(query)
        terms = query_terms(parsed.content)
        if window is None and parsed.order is None and not parsed.asks_when:
            return []
        if parsed.order is not None and window is None and parsed.anchor is None and _topic_free(terms):
            return self._conversation(query, newest=parsed.order == "latest")
        ranked = self._rank(query, embedding, terms, window, reuse=True)
        # Relevant by time: inside the window of a question about the window itself ("what did
        # we do yesterday?"). With a topic ("what did I eat yesterday?") the window only narrows
        # the search, and the relevance floor judges the content as for any other hit.
        timed = window is not None and _topic_free(terms)
        if parsed.order is not None:
            return self._by_time(query, ranked, newest_first=parsed.order == "latest", timed=timed)
        if parsed.asks_when and window is None:
            return self._dated(query, ranked)
        return [Candidate(f.rowid, f.score, timed=timed) for f in ranked]

    # -- steps ---------------------------------------------------------------------------

    @staticmethod
    def _parsed(query: RecallQuery) -> TimeQuery | None:
        """The query's time expressions (read once per recall)."""
        return query.searches.once(
            ("temporal.parsed", query.text, query.now), lambda: parse_time_query(query.text, query.now)
        )

    def _embedding(self, query: RecallQuery) -> npt.NDArray[np.float32]:
        if query.embedding is not None:
            return query.embedding
        return self._embedder.embed_query(query.text)

    def _resolve_anchor(self, query: RecallQuery, parsed: TimeQuery) -> TimeWindow | None:
        """The query's window, narrowed by "before/after <event>" when it has one."""
        window = parsed.window
        if parsed.anchor is None:
            return window
        vector = self._embedder.embed_query(parsed.anchor)
        best = self._rank(query, vector, query_terms(parsed.anchor), None, limit=1)
        if not best:
            return window
        records = query.searches.records(self._store, query.user_id, [best[0].rowid])
        record = records.get(best[0].rowid)
        if record is None:
            return window
        at = record.event_time
        side = TimeWindow(None, at) if parsed.anchor_side == "before" else TimeWindow(at + _TICK, None)
        return side if window is None else window.intersect(side)

    def _rank(
        self,
        query: RecallQuery,
        embedding: npt.NDArray[np.float32],
        terms: Sequence[str],
        window: TimeWindow | None,
        *,
        limit: int | None = None,
        reuse: bool = False,
    ) -> list[Fused]:
        """Content matches (vector + BM25, fused by rank), inside the window if given.

        With ``reuse`` and no window, the vector and keyword paths' candidates for this
        recall are fused instead of searching again.
        """
        limit = limit or query.limit
        if reuse and window is None and "vector" in query.earlier and "keyword" in query.earlier:
            # The whole-scope content ranking is what those paths just computed.
            return reciprocal_rank_fusion(
                {"vector": query.earlier["vector"], "keyword": query.earlier["keyword"]}
            )[:limit]
        if window is None:
            vector = self._index.search(query.user_id, embedding, limit)
            keyword = self._store.keyword_search(query.user_id, terms, limit)
        else:
            reads = self._window_reads(query, terms, window, limit)
            if reads is None:
                return []
            rowids, keyword = reads
            vector = self._index.search_subset(query.user_id, embedding, rowids, limit)
        fused = reciprocal_rank_fusion(
            {
                "vector": [Candidate(i, s) for i, s in vector],
                "keyword": [Candidate(i, s) for i, s in keyword],
            }
        )
        return fused[:limit]

    def _window_reads(
        self, query: RecallQuery, terms: Sequence[str], window: TimeWindow, limit: int
    ) -> tuple[list[int], list[tuple[int, float]]] | None:
        """A window's rows (said in it, then pointing into it) and keyword matches; None: no rows.

        Read once per recall (held in ``query.searches``): none of it needs the query embedding.
        """
        key = ("temporal.window", window, tuple(terms), limit)
        return query.searches.once(key, lambda: self._read_window(query, terms, window, limit))

    def _read_window(
        self, query: RecallQuery, terms: Sequence[str], window: TimeWindow, limit: int
    ) -> tuple[list[int], list[tuple[int, float]]] | None:
        newest_first = not (window.start is not None and window.end is None)
        ids = self._store.window_rowids(
            query.user_id,
            since=window.start,
            until=window.end,
            limit=self.max_window,
            newest_first=newest_first,
        )
        mentioned = self._mentioned_in(query, window, said_inside=ids)
        if not ids and not mentioned:
            return None
        keyword = self._store.keyword_search(
            query.user_id, terms, limit, since=window.start, until=window.end
        )
        if mentioned:
            keyword += self._keyword_among(query, terms, limit, window, set(mentioned))
        return ids + mentioned, keyword

    def _mentioned_in(self, query: RecallQuery, window: TimeWindow, *, said_inside: list[int]) -> list[int]:
        """Memories said outside the window whose own relative dates point into it.

        "We went camping last summer" said in November, or "I fly to Paris next month"
        said in April, for a window on the summer or on May.
        """
        if window.start is None and window.end is None:
            return []
        inside = set(said_inside)
        # Only the rows said in reach that point somewhere come back, and only rows not grounded
        # yet are read (and grounded once): loading and parsing every record of the reach for
        # each query (hundreds of rows) was most of its time, then reading each row's window.
        pointing, missing = self._grounded.said_between(query.user_id, _reach(window), self.max_window)
        grounded: dict[int, TimeWindow | None] = dict(pointing)
        missing = [i for i in missing if i not in inside]
        if missing:
            records = self._store.get_by_rowids(query.user_id, missing)
            grounded.update(self._grounded.ground(query.user_id, records))
        found = []
        for rowid in sorted(set(grounded) - inside):  # the order the store returns rows in (by row id)
            points_at = grounded[rowid]
            if points_at is not None and not window.intersect(points_at).empty:
                found.append(rowid)
        return found

    def _keyword_among(
        self, query: RecallQuery, terms: Sequence[str], limit: int, window: TimeWindow, allowed: set[int]
    ) -> list[tuple[int, float]]:
        """Keyword matches among the memories that mention a time in the window."""
        reach = _reach(window)
        found = self._store.keyword_search(query.user_id, terms, limit, since=reach.start, until=reach.end)
        return [(rowid, score) for rowid, score in found if rowid in allowed]

    def _by_time(
        self, query: RecallQuery, ranked: list[Fused], *, newest_first: bool, timed: bool
    ) -> list[Candidate]:
        """The strong matches by event time, then the rest by relevance.

        Strong matches are those among the best ``order_pool`` that both vector and
        keyword search found (else the vector matches near the best one, else the best
        three), so that "last time we talked about X" means the most recent memory that
        is really about X, not the most recent one at all.
        """
        head = ranked[: self.order_pool]
        strong = [f for f in head if len(f.ranks) == 2] or self._near_best(head) or ranked[:3]
        records = query.searches.records(self._store, query.user_id, [f.rowid for f in strong])
        by_time = sorted(
            (f for f in strong if f.rowid in records),
            key=lambda f: (records[f.rowid].event_time, f.rowid),
            reverse=newest_first,
        )
        chosen = {f.rowid for f in by_time}
        ordered = by_time + [f for f in ranked if f.rowid not in chosen]
        return [Candidate(f.rowid, f.score, timed=timed) for f in ordered]

    def _conversation(self, query: RecallQuery, *, newest: bool) -> list[Candidate]:
        """The memories of the newest (oldest) session before ``now`` other than the current one.

        Memories without a session count as one conversation each (newest first).
        """
        recent = self._store.find(query.user_id, until=query.now, newest_first=newest, limit=self.order_scan)
        session = next(
            (r.session_id for r in recent if r.session_id is not None and r.session_id != query.session_id),
            None,
        )
        if session is None:
            chosen = [r for r in recent if r.session_id is None][: query.limit]
        else:
            chosen = self._store.find(
                query.user_id, session_id=session, until=query.now, newest_first=True, limit=query.limit
            )
        rowids = self._store.rowids(query.user_id, [r.id for r in chosen])
        ordered = [rowids[r.id] for r in chosen if r.id in rowids]
        return [Candidate(rowid, 1.0 / (n + 1), sole=True) for n, rowid in enumerate(ordered)]

    def _near_best(self, head: list[Fused]) -> list[Fused]:
        """The vector matches within ``order_margin`` of the best vector score."""
        scored = [f for f in head if "vector" in f.path_scores]
        if not scored:
            return []
        best = max(f.path_scores["vector"] for f in scored)
        return [f for f in scored if f.path_scores["vector"] >= best - self.order_margin]

    def _dated(self, query: RecallQuery, ranked: list[Fused]) -> list[Candidate]:
        """The active matches whose text mentions a time, in relevance order."""
        # Only the texts are needed; decoding whole records costs more (as on the speaker path).
        texts = query.searches.active_texts(self._store, query.user_id, [f.rowid for f in ranked])
        return [
            Candidate(f.rowid, f.score) for f in ranked if f.rowid in texts and mentions_time(texts[f.rowid])
        ]


_TICK = timedelta(microseconds=1)


def _reach(window: TimeWindow) -> TimeWindow:
    """The times a memory pointing into ``window`` may have been said at."""
    return TimeWindow(
        None if window.start is None else window.start - GROUNDING_REACH,
        None if window.end is None else window.end + GROUNDING_REACH,
    )


_CONVERSING = frozenset(
    """talk talked talking talks discuss discussed discussing discussion chat chatted chatting say said
    speak spoke mention mentioned conversation conversations session sessions cover covered go went
    do does did doing done happen happens happened happening
    聊 聊天 聊过 聊到 谈 谈过 谈到 说 说过 讨论 讨论过 提到 提过 对话 会话
    做 做过 干 干过 发生 发生过""".split()
)
"""Words of a time question that ask about the conversation or the time itself, not a topic
("what did we talk about last time?", "what happened yesterday?", "我们昨天做了什么")."""


def _topic_free(terms: Sequence[str]) -> bool:
    """True when a question names no topic: only words about conversing or happening are left."""
    return all(t in _CONVERSING for t in terms)
