"""The keyword index: BM25 over the FTS5 table (own words, context, user scope), and its query planning.

Own words weigh 1.0, the context column (a turn's previous turns) ``context_weight``.
The plan (every term, then pairs, then any term with frequent terms left out) is in
:mod:`dreammem.stores.fts_query`.

A third column, ``scope``, holds one token per row naming its user
(:func:`~dreammem.stores.sqlite.codec.scope_token`, weight 0 in ``bm25()``). A user
holding at most ``SCOPE_SHARE`` of the indexed rows is searched with that token
ANDed to the query, so FTS5 intersects posting lists and computes ``bm25()`` for that
user's matches only; a user holding most of the index is ranked without it (the
intersection would cost more than it saves). ``bm25()`` counts the scope token in a
row's length (one token per row), so both plans give the same scores.

FTS5's ``bm25()`` statistics cover the whole index, so it ranks only a user whose rows
are the whole index (then they are that user's); a user sharing the index is ranked
with its own statistics (:mod:`~dreammem.stores.sqlite.user_keyword`, issue 35 item 11).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dreammem.stores import fts_query
from dreammem.stores.fts_query import match_all, match_any, match_pairs
from dreammem.stores.sqlite.codec import HEADROOM, insert_fts_rows, remove_fts_rows, scope_token, time_filter
from dreammem.stores.sqlite.rank_outside import corpus_of, outside_pays
from dreammem.stores.sqlite.user_keyword import UserKeywordRows

__all__ = ["SCOPE_SHARE", "KeywordRows"]

SCOPE_SHARE = 0.5
"""Largest share of the indexed rows a user may hold to be searched through the scope column."""


class KeywordRows(UserKeywordRows):
    """Keyword search and the full-text rows of the SQLite store."""

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
        """BM25 over the full-text index: active records of this user, best first.

        Rows holding every term are ranked first and answer alone when there are
        ``limit`` of them; on large match sets, rows holding two terms next; otherwise
        any term may match (:mod:`dreammem.stores.fts_query`).

        Args:
            user_id: The scope.
            terms: Query terms (any may match).
            limit: How many results at most.
            since: Only records with ``event_time >= since``.
            until: Only records with ``event_time < until``.
            max_term_share: When the OR query runs, leave out terms found in more than
                this share of the indexed rows (if a rarer term remains); ``None`` keeps all.

        Returns:
            ``(rowid, score)`` pairs; the score is the negated FTS5 ``bm25()`` (higher is better),
            with the user's own statistics: a user whose rows are the whole index is ranked
            by FTS5, any other by :mod:`~dreammem.stores.sqlite.user_keyword` (the same
            scores the user would get alone).
        """
        stats, whole = self.user_keyword_stats(user_id)
        if stats is None:
            return []
        if not whole:
            return self._user_search(user_id, stats, terms, limit, since, until, max_term_share)
        terms = self._term_shares.present(terms)
        if not terms:
            return []
        scope = self._scope(user_id)
        # A step that cannot fill ``limit`` is skipped before bm25() runs: FTS5 counts
        # the documents of every phrase for it, a pass over each term's whole posting list.
        if len(terms) > 1 and self._matches(match_all(terms), scope, limit):
            rows = self._bm25(match_all(terms), user_id, limit, since, until, scope, terms=terms)
            if len(rows) >= limit:
                return rows
        if self._term_shares.pairs_pay(terms) and self._matches(match_pairs(terms), scope, limit):
            rows = self._bm25(match_pairs(terms), user_id, limit, since, until, scope)
            if len(rows) >= limit:
                return [(rowid, score / (len(terms) - 1)) for rowid, score in rows]
        if max_term_share is not None:
            rare = self._term_shares.rare(terms, max_term_share)
            if not rare:  # every term is frequent: only the newest matches are ranked
                return self._bm25(
                    match_any(terms), user_id, limit, since, until, scope, fts_query.FREQUENT_WINDOW, terms
                )
            terms = rare
        return self._bm25(match_any(terms), user_id, limit, since, until, scope, terms=terms)

    def _scope(self, user_id: str) -> str | None:
        """The FTS5 phrase of this user's scope token, or None when the user holds most of the index."""
        token = scope_token(user_id)
        return match_any([token]) if self._term_shares.rare([token], SCOPE_SHARE) else None

    def _matches(self, match: str, scope: str | None, least: int) -> bool:
        """Whether at least ``least`` rows match (in this scope): posting lists only, no ranking."""
        return self._fts_count(self._expression(match, scope), least) >= least

    @staticmethod
    def _expression(match: str, scope: str | None) -> str:
        """The query's words, ANDed with the user's scope when given.

        The words are not limited to the text columns (a column filter makes FTS5's
        document counts for ``bm25()`` read every position list: 30 % slower at 200k
        rows). A query word that is a scope token matches that user's rows with weight
        0, and other users' rows never pass the user filter.
        """
        return match if scope is None else f"scope : {scope} AND ({match})"

    def _most_matches(self, user_id: str, scope: str | None) -> int:
        """The most rows a search can match: the user's rows when scoped, else every row (cached counts).

        A search that cannot match more than a window skips the window's query (small
        stores and small users run the plan they ran before the window existed).
        """
        if scope is None:
            return self._term_shares.rows()
        return self._term_shares.documents(scope_token(user_id))

    def _bm25_newest(
        self,
        expression: str,
        user_id: str,
        limit: int,
        window: tuple[str, list[str]],
        span: tuple[int, int],
        newest: int,
        terms: Sequence[str] | None,
    ) -> list[tuple[int, float]] | None:
        """BM25 over the ``newest`` matching rows in the row id ``span``; None when fewer match or survive.

        ``window`` is the event-time filter (:func:`~dreammem.stores.sqlite.codec.time_filter`).
        The scores are those of ranking every match (FTS5's statistics cover the whole index).
        ``terms``: the query's terms when ``expression`` is a plain AND or OR of them.
        """
        floor = self.fetchone(
            "SELECT rowid FROM records_fts WHERE records_fts MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (expression, *span, newest - 1),
        )
        if floor is None:  # fewer matches than the window: the full ranking is as cheap
            return None
        newest_span = (int(floor[0]), span[1])
        outside = self._ranked_outside(terms, expression, user_id, limit, window, newest_span, newest, True)
        if outside is not None:
            return outside if len(outside) >= limit else None
        where, params = window
        # One statement: every bm25() statement first counts the documents of each query
        # phrase over the whole index (10 ms at a million rows), so ranking the window's
        # best rows first and all of it when too few of those are active (a superseded
        # slot's values) paid that twice.
        rows = self.fetchall(
            f"SELECT f.rowid, -f.s FROM (SELECT rowid, {self._rank} AS s FROM records_fts "
            "WHERE records_fts MATCH ? AND rowid BETWEEN ? AND ?) f JOIN records r ON r.rowid = f.rowid "
            f"WHERE +r.user_id = ? AND r.status = 'active'{where} ORDER BY f.s LIMIT ?",
            (expression, int(floor[0]), span[1], user_id, *params, limit),
        )
        return [(int(r[0]), float(r[1])) for r in rows] if len(rows) >= limit else None

    def _bm25(
        self,
        match: str,
        user_id: str,
        limit: int,
        since: datetime | None,
        until: datetime | None,
        scope: str | None = None,
        newest: int | None = None,
        terms: Sequence[str] | None = None,
    ) -> list[tuple[int, float]]:
        """Rows of this user matching an FTS5 expression, best BM25 first (``scope``: this user's only).

        Over ``newest`` matches (default ``fts_query.RANK_WINDOW``), only the newest that
        many are ranked, unless fewer than ``limit`` of them are this user's active rows.
        ``terms``: the query's terms when ``match`` is a plain AND or OR of them (then the
        rows may be ranked outside FTS5, :meth:`_ranked_outside`).
        """
        rank = self._rank
        expression = self._expression(match, scope)
        window = time_filter(since, until, "r.")
        span = self._window_span(user_id, since, until)
        if span is None:
            return []
        size = fts_query.RANK_WINDOW if newest is None else newest
        most = self._most_matches(user_id, scope)
        if most > size:
            found = self._bm25_newest(expression, user_id, limit, window, span, size, terms)
            if found is not None:
                return found
        outside = self._ranked_outside(terms, expression, user_id, limit, window, span, most, False)
        if outside is not None:
            return outside
        where, params = window
        filters = f"+r.user_id = ? AND r.status = 'active'{where}"
        if scope is None and since is None and until is None:
            # Rank in the full-text index alone first (cheap when this user holds most
            # of it), then keep this user's active rows; fall back to the joined query
            # when too few survive.
            rows = self.fetchall(
                f"SELECT f.rowid, -f.s FROM (SELECT rowid, {rank} AS s FROM records_fts "
                "WHERE records_fts MATCH ? ORDER BY s LIMIT ?) f JOIN records r ON r.rowid = f.rowid "
                f"WHERE {filters} ORDER BY f.s LIMIT ?",
                (expression, limit * HEADROOM, user_id, limit),
            )
            cap = limit * HEADROOM
            if len(rows) == limit or self._fts_count(expression, cap) < cap:  # complete: no fallback
                return [(int(r[0]), float(r[1])) for r in rows]
        rows = self.fetchall(
            f"SELECT f.rowid, -{rank} AS score FROM records_fts f "
            "JOIN records r ON r.rowid = f.rowid "
            f"WHERE records_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND {filters} "
            f"ORDER BY {rank} LIMIT ?",
            (expression, *span, user_id, *params, limit),
        )
        return [(int(r[0]), float(r[1])) for r in rows]

    def _ranked_outside(
        self,
        terms: Sequence[str] | None,
        expression: str,
        user_id: str,
        limit: int,
        window: tuple[str, list[str]],
        span: tuple[int, int],
        most: int,
        newest: bool,
    ) -> list[tuple[int, float]] | None:
        """The user's active matches in the row id ``span`` ranked outside FTS5, or None: FTS5 ranks.

        Taken when FTS5's document counts for ``bm25()`` would cost more than reading the
        rows (:func:`~dreammem.stores.sqlite.rank_outside.outside_pays`): the statement
        ranks the ``most`` newest matches (``newest``), or this user's matches among its
        ``most`` rows, expected to be the user's share of the phrases' documents. The
        scores are ``bm25()``'s (:mod:`~dreammem.stores.sqlite.rank_outside`).
        """
        indexed = self._term_shares.rows()
        if terms is None or not outside_pays(most, [indexed] * (len(terms) if newest else 1)):
            return None
        phrases = self._outside.phrases(terms)
        if phrases is None:
            return None
        where, params = window
        with self._lock:  # the statistics and the rows of one moment
            if self._conn.in_transaction:  # FTS5 writes its totals on commit: let it rank
                return None
            block = self.fetchone("SELECT block FROM records_fts_data WHERE id = 1")
            corpus = corpus_of(None if block is None else bytes(block[0]))
            documents = [self._documents.get(match_any([term]), corpus.rows) for term in terms]
            expected = most if newest else min(most, sum(documents) * most // max(corpus.rows, 1))
            if not outside_pays(expected, documents):
                return None
            rows = self.fetchall(
                "SELECT f.rowid, f.terms, f.context FROM records_fts f JOIN records r ON r.rowid = f.rowid "
                "WHERE records_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND +r.user_id = ? "
                f"AND r.status = 'active'{where}",
                (expression, *span, user_id, *params),
            )
        return self._outside.rank([(int(r[0]), r[1], r[2]) for r in rows], phrases, documents, corpus, limit)

    @property
    def _rank(self) -> str:
        """The BM25 expression: own words weigh 1.0, the context column ``context_weight``, scope 0."""
        return f"bm25(records_fts, 1.0, {self.context_weight!r}, 0.0)"

    def window_rowids(
        self,
        user_id: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int,
        newest_first: bool = True,
    ) -> list[int]:
        """Row ids of this user's active records with ``since <= event_time < until``.

        Ordered by event time (newest first unless asked otherwise), equal times by row
        id the same way (:mod:`dreammem.stores.ties`); served by the
        ``(user_id, status, event_time)`` index, whose entries end in the row id.
        """
        where, params = time_filter(since, until, "")
        order = "DESC" if newest_first else "ASC"
        rows = self.fetchall(
            f"SELECT rowid FROM records WHERE user_id = ? AND status = 'active'{where} "
            f"ORDER BY event_time {order}, rowid {order} LIMIT ?",
            (user_id, *params, limit),
        )
        return [int(r[0]) for r in rows]

    def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
        """Replace the full-text terms (and context terms) of one record."""
        with self.transaction() as conn:
            remove_fts_rows(conn, [rowid])
            insert_fts_rows(conn, [(rowid, terms, context)])
        self._note_indexed(1)

    def set_match_terms(self, rowid: int, terms: str) -> None:
        """Replace a record's own full-text terms, keeping its context terms."""
        row = self.fetchone("SELECT context FROM records_fts WHERE rowid = ?", (rowid,))
        self.set_match_text(rowid, terms, str(row[0]) if row is not None and row[0] else "")
