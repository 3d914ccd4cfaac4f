"""The keyword index of the Neo4j record store: Lucene finds, FTS5's ``bm25()`` ranks.

Each record node carries its own words (``terms``) and its context (``context``,
the previous turns of its session) as the tokens FTS5 makes of the SQLite store's
pre-tokenised text (:class:`~dreammem.stores.fts5_terms.Fts5Tokens`: Porter stems,
folded diacritics), joined by spaces; Chinese is segmented before it reaches the
server, so the index uses Lucene's ``whitespace`` analyzer and needs no language
analyzer. A third indexed property, ``scope``, is the hashed user id while the
record is active (absent otherwise); every query requires it, so Lucene returns
only this user's active records.

The plan is the SQLite store's (:mod:`dreammem.stores.fts_query`): terms none of the
user's records holds are dropped; rows holding every term answer alone when there are
``limit`` of them; on large match sets rows holding two terms come next;
``max_term_share`` leaves frequent terms out of the OR query; every decision on the
user's own counts. At each step Lucene returns the user's matches (all of them up to
``_COMPLETE``, else its own BM25 order's best) and they are ranked by FTS5's
``bm25()`` (:class:`~dreammem.stores.fts5_terms.Bm25Rows`, :func:`~dreammem.stores.fts5_terms.fts5_bm25`
to the bit, each phrase's idf worked out once per step: the user's row, token and
document counts, :mod:`~dreammem.stores.neo4j_keyword_stats`; own words 1.0, context
``context_weight``), so both backends rank alike (Lucene's per-field length norms and
IDF differ from FTS5's) and no other user's records move a user's ranking.
The SQLite store's newest-window shortcut is an FTS5 cost saving Lucene does not need.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from itertools import combinations

from dreammem.errors import BackendError
from dreammem.stores.fts5_terms import Bm25Rows, Fts5Tokens, split_tokens
from dreammem.stores.fts_query import UserSearch, frequent, pairs_pay
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_keyword_stats import UserKeywordCounts
from dreammem.stores.neo4j_records import TERMS_FORMAT, scope_of
from dreammem.stores.neo4j_times import said_between, utc_iso

__all__ = ["TEXT_INDEX", "KeywordNodes", "lucene_term"]

TEXT_INDEX = "dm_record_text"
_HEADROOM = 4
_RESCORED = 200
"""Lucene candidates ranked by FTS5's bm25() beyond the ``limit`` asked for."""
_COMPLETE = 2_000
"""Matches of one step fetched whole (ranked by the user's statistics alone); beyond, Lucene's best."""

_SEARCH = """
CALL db.index.fulltext.queryNodes($index, $query, {limit: $fetch}) YIELD node
WITH collect(node) AS nodes
RETURN size(nodes) AS seen,
  [n IN nodes WHERE n.user_id = $user_id AND n.status = 'active'
     AND ($since IS NULL OR n.event_time >= $since)
     AND ($until IS NULL OR n.event_time < $until)
   | toString(n.rowid) + $sep + coalesce(n.terms, '') + $sep + coalesce(n.context, '')] AS found
"""
"""A step's rows, each one string (``rowid``, terms, context joined by :data:`_SEP`): a 2,000-row
step decodes in half the client time of ``[rowid, terms, context]`` lists."""
_SEP = "\x1f"
"""Joins a row's fields: FTS5's tokenizer splits at control characters, so no token holds it."""

_COUNT_CAP = 50_000
"""Counts above this are taken as this for the pairs step (as the SQLite plan caps them)."""


def _fields(row: str) -> tuple[int, str, str]:
    """One row of :data:`_SEARCH`: its rowid, terms and context.

    Raises:
        BackendError: the terms hold :data:`_SEP` (not written by this library: FTS5's tokens cannot).
    """
    rowid, own, context = row.split(_SEP, 2)
    if _SEP in context:
        raise BackendError(f"record {rowid}'s keyword terms hold a control character (U+001F)")
    return int(rowid), own, context


def lucene_term(term: str) -> str:
    """One term as a quoted Lucene phrase (user text never reaches the parser unescaped)."""
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


class KeywordNodes:
    """Keyword search and keyword terms of ``(:DMRecord)`` nodes.

    Args:
        client: The server connection.
        context_weight: The weight of the context field (own words weigh 1.0).
    """

    def __init__(self, client: Neo4jClient, context_weight: float = 0.5) -> None:
        self.client = client
        self.context_weight = float(context_weight)
        self.fts5 = Fts5Tokens()
        self._counts = UserKeywordCounts(client, TEXT_INDEX)

    def index_texts(self, texts: Sequence[str]) -> list[str]:
        """Texts as the index stores them: FTS5's tokens, space-joined."""
        return self.fts5.joined(texts)

    def _either(self, term: str) -> str:
        quoted = lucene_term(term)
        return f"terms:{quoted} context:{quoted}^{self.context_weight!r}"

    def keyword_search(
        self,
        user_id: str,
        terms: Sequence[str],
        limit: int,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        max_term_share: float | None = None,
    ) -> list[tuple[int, float]]:
        """FTS5's BM25 over this user's active records: ``(rowid, score)``, best first."""
        if limit <= 0:
            return []
        phrases = [p for p in dict.fromkeys(self.index_texts([t for t in terms if t])) if p]
        corpus, documents = self._counts.counts(user_id, {p: self._either(p) for p in phrases})
        phrases = [p for p in phrases if documents[p]]
        if not phrases:
            return []
        search = UserSearch(user_id, corpus, documents, limit, since, until)
        scope = f"+scope:{lucene_term(scope_of(user_id))}"
        if len(phrases) > 1:
            every = " ".join(f"+({self._either(p)})" for p in phrases)
            rows = self._ranked(f"{scope} {every}", phrases, search)
            if len(rows) >= limit:
                return rows
        if pairs_pay([min(documents[p], _COUNT_CAP) for p in phrases], corpus.rows):
            pairs = " ".join(
                f"(+({self._either(a)}) +({self._either(b)}))" for a, b in combinations(phrases, 2)
            )
            rows = self._ranked(f"{scope} +({pairs})", phrases, search)
            if len(rows) >= limit:
                return rows
        if max_term_share is not None:
            rare = [p for p in phrases if not frequent(documents[p], corpus.rows, max_term_share)]
            phrases = rare or phrases
        anyof = " ".join(self._either(p) for p in phrases)
        return self._ranked(f"{scope} +({anyof})", phrases, search)

    def _ranked(self, query: str, phrases: Sequence[str], search: UserSearch) -> list[tuple[int, float]]:
        """The user's matches of ``query``, ranked by FTS5's bm25() over ``phrases`` (the user's statistics).

        Up to ``_COMPLETE`` matches are all fetched (so no other user's rows can change
        which are ranked); beyond, Lucene's best ``_COMPLETE`` (Lucene's own statistics
        are index-wide: the bound docs/RELIABILITY.md states).
        """
        want = max(search.limit + max(search.limit, _RESCORED), _COMPLETE)
        found = self._candidates(query, search.user_id, want, search.since, search.until)
        if not found:
            return []
        tokens = [split_tokens(p) for p in phrases]
        documents = {tuple(t): search.documents[p] for p, t in zip(phrases, tokens, strict=True)}
        rows = Bm25Rows(tokens, (1.0, self.context_weight), documents, search.corpus)
        scored = [(rowid, rows.score((own, context))) for rowid, own, context in found]
        scored.sort(key=lambda row: (-row[1], row[0]))
        return scored[: search.limit]

    def _candidates(
        self, query: str, user_id: str, want: int, since: datetime | None, until: datetime | None
    ) -> list[tuple[int, str, str]]:
        """Up to ``want`` of this user's matching rows (ask for more while a time window filters)."""
        fetch = want if since is None and until is None else want * _HEADROOM
        while True:
            rows = self.client.run(
                "keyword_search",
                _SEARCH,
                index=TEXT_INDEX,
                query=query,
                fetch=fetch,
                user_id=user_id,
                since=utc_iso(since),
                until=utc_iso(until),
                sep=_SEP,
            )
            found = [_fields(str(row)) for row in rows[0]["found"]]
            if len(found) >= want or int(rows[0]["seen"]) < fetch:
                return found[:want]
            fetch *= _HEADROOM

    def _note_writes(self, count: int) -> None:
        """Count rows this process (re)indexed; cached per-user counts refresh once they are a stale share."""
        self._counts.note_writes(count)

    def window_rowids(
        self,
        user_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        newest_first: bool = True,
    ) -> list[int]:
        """Row ids of this user's active records with ``since <= event_time < until``."""
        order = "DESC" if newest_first else "ASC"
        rows = self.client.run(
            "window_rowids",
            said_between(since, until) + "RETURN r.rowid AS rowid "
            f"ORDER BY r.user_id {order}, r.event_time {order}, rowid {order} LIMIT $limit",
            user_id=user_id,
            since=utc_iso(since),
            until=utc_iso(until),
            limit=limit,
        )
        return [int(r["rowid"]) for r in rows]

    def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
        """Replace one record's keyword terms and context terms."""
        own, around = self.index_texts([terms, context])
        self.client.run(
            "set_match_text",
            "MATCH (r:DMRecord {rowid: $rowid}) SET r.terms = $terms, r.context = $context, "
            "r.terms_format = $format",
            rowid=rowid,
            terms=own,
            context=around,
            format=TERMS_FORMAT,
        )
        self._note_writes(1)

    def set_match_terms(self, rowid: int, terms: str) -> None:
        """Replace one record's own keyword terms, keeping its context terms."""
        self.client.run(
            "set_match_terms",
            "MATCH (r:DMRecord {rowid: $rowid}) SET r.terms = $terms",
            rowid=rowid,
            terms=self.index_texts([terms])[0],
        )
        self._note_writes(1)
