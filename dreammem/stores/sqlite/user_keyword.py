"""Keyword search of a user who shares the index: BM25 with that user's statistics only.

FTS5's ``bm25()`` counts rows, tokens and each phrase's documents over the whole
table, so a user's scores moved with other users' writes. A user whose rows are the
whole index is ranked by FTS5 as before (its statistics are the user's); any other
user is searched here:

* matching stays with FTS5, the user's scope token ANDed to the query (only the
  user's rows match);
* the statistics are the user's (:mod:`~dreammem.stores.sqlite.user_stats`): rows and
  tokens from ``keyword_users``, each phrase's documents counted among the user's rows;
* the plan is :meth:`~dreammem.stores.sqlite.keyword.KeywordRows.keyword_search`'s
  (rows with every term, then rows with two on large match sets, then any term;
  frequent terms and the newest-matches window), every decision taken on the user's
  counts;
* the rows are scored outside FTS5 with FTS5's formula
  (:func:`~dreammem.stores.fts5_terms.bm25_row`, the words' FTS5 tokens and lengths
  from :class:`~dreammem.stores.sqlite.rank_outside.OutsideRanker`), the OR of pairs as
  FTS5 scores it (a phrase counts within a pair the row holds whole).

So a user's results are those the same user would get alone in a store: no other
user's rows can change a match, a count or a score.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from dreammem.stores import fts_query
from dreammem.stores.fts5_terms import bm25_idf, bm25_pairs, bm25_row
from dreammem.stores.fts_query import UserSearch, match_all, match_any, match_pairs
from dreammem.stores.sqlite.codec import scope_expression, time_filter
from dreammem.stores.sqlite.connection import SQLiteConnection
from dreammem.stores.sqlite.rank_outside import corpus_of
from dreammem.stores.sqlite.user_stats import UserStats

__all__ = ["UserKeywordRows"]

_COUNT_CAP = 50_000
"""Counts above this are taken as this for the pairs step (as the whole-index plan caps them)."""


class UserKeywordRows(SQLiteConnection):
    """Per-user keyword statistics and the search of a user who shares the index."""

    def user_keyword_stats(self, user_id: str) -> tuple[UserStats | None, bool]:
        """The user's keyword statistics (None: no keyword rows), and whether its rows are the whole index.

        Read in one statement (one snapshot). Inside a write transaction the index's
        totals on disk lag (FTS5 writes them on commit), so the user is never taken
        for the whole index there.
        """
        with self._lock:
            pending = self._conn.in_transaction
            row = self.fetchone(
                "SELECT k.rows, k.tokens, k.writes, (SELECT block FROM records_fts_data WHERE id = 1) "
                "FROM keyword_users k WHERE k.user_id = ?",
                (user_id,),
            )
        if row is None or int(row[0]) <= 0:
            return None, False
        stats = UserStats(int(row[0]), int(row[1]), int(row[2]))
        whole = not pending and corpus_of(None if row[3] is None else bytes(row[3])) == stats.corpus
        return stats, whole

    def _user_search(
        self,
        user_id: str,
        stats: UserStats,
        terms: Sequence[str],
        limit: int,
        since: datetime | None,
        until: datetime | None,
        max_term_share: float | None,
    ) -> list[tuple[int, float]]:
        """The keyword plan over this user's rows, scored with the user's statistics."""
        cache = not self._conn.in_transaction
        documents = self._user_documents
        counts = {t: documents.get(user_id, stats, match_any([t]), cache=cache) for t in dict.fromkeys(terms)}
        terms = [t for t in terms if counts[t]]
        if not terms:
            return []
        span = self._window_span(user_id, since, until)
        if span is None:
            return []
        plan = UserSearch(user_id, stats.corpus, counts, limit, since, until)
        if len(terms) > 1 and self._user_matches(plan, match_all(terms)):
            rows = self._user_ranked(plan, span, match_all(terms), terms)
            if len(rows) >= limit:
                return rows
        capped = [min(counts[t], _COUNT_CAP) for t in terms]
        if fts_query.pairs_pay(capped, stats.rows) and self._user_matches(plan, match_pairs(terms)):
            rows = self._user_ranked(plan, span, match_pairs(terms), terms, pairs=True)
            if len(rows) >= limit:
                return rows
        if max_term_share is not None:
            rare = [t for t in terms if not fts_query.frequent(counts[t], stats.rows, max_term_share)]
            if not rare:  # every term is frequent: only the newest matches are ranked
                return self._user_ranked(
                    plan, span, match_any(terms), terms, newest=fts_query.FREQUENT_WINDOW
                )
            terms = rare
        return self._user_ranked(plan, span, match_any(terms), terms)

    def _user_matches(self, plan: UserSearch, match: str) -> bool:
        """Whether at least ``limit`` of the user's rows match (posting lists only)."""
        return self._fts_count(f"{scope_expression(plan.user_id)} AND ({match})", plan.limit) >= plan.limit

    def _user_ranked(
        self,
        plan: UserSearch,
        span: tuple[int, int],
        match: str,
        terms: Sequence[str],
        *,
        pairs: bool = False,
        newest: int | None = None,
    ) -> list[tuple[int, float]]:
        """The user's active matches, best first.

        Over ``newest`` matches (default ``RANK_WINDOW``) only the newest that many are
        ranked, unless fewer than ``limit`` of them are active in the time window.
        """
        expression = f"{scope_expression(plan.user_id)} AND ({match})"
        size = fts_query.RANK_WINDOW if newest is None else newest
        if plan.corpus.rows > size:
            floor = self.fetchone(
                "SELECT rowid FROM records_fts WHERE records_fts MATCH ? AND rowid BETWEEN ? AND ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (expression, *span, size - 1),
            )
            if floor is not None:
                found = self._user_scored(plan, expression, (int(floor[0]), span[1]), terms, pairs)
                if len(found) >= plan.limit:
                    return found
        return self._user_scored(plan, expression, span, terms, pairs)

    def _user_scored(
        self, plan: UserSearch, expression: str, span: tuple[int, int], terms: Sequence[str], pairs: bool
    ) -> list[tuple[int, float]]:
        """The best ``limit`` of the user's active matches in the row id span, with the user's BM25.

        Equal scores keep the lower row id first, as FTS5 orders them.
        """
        where, params = time_filter(plan.since, plan.until, "r.")
        found = self.fetchall(
            "SELECT f.rowid, f.terms, f.context FROM records_fts f JOIN records r ON r.rowid = f.rowid "
            "WHERE records_fts MATCH ? AND f.rowid BETWEEN ? AND ? AND +r.user_id = ? "
            f"AND r.status = 'active'{where}",
            (expression, *span, plan.user_id, *params),
        )
        corpus = plan.corpus
        idfs = [bm25_idf(corpus.rows, plan.documents[t]) for t in terms]
        score = bm25_pairs if pairs else bm25_row
        rows = [(int(r[0]), r[1], r[2]) for r in found]
        scored = sorted(
            (-score(freqs, length, idfs, corpus), rowid)
            for rowid, freqs, length in self._outside.frequencies(rows, self._outside.phrase_tokens(terms))
        )
        return [(rowid, -bm25) for bm25, rowid in scored[: plan.limit]]

    def _window_span(
        self, user_id: str, since: datetime | None, until: datetime | None
    ) -> tuple[int, int] | None:
        """The row id range of this user's active records in the window (None: no records).

        FTS5 skips postings outside a row id range cheaply, so a month of a 100k store
        (memories arrive roughly in time order) ranks a few hundred matches, not all.
        """
        if since is None and until is None:
            return (0, 2**63 - 1)
        where, params = time_filter(since, until, "")
        row = self.fetchone(
            f"SELECT MIN(rowid), MAX(rowid) FROM records WHERE user_id = ? AND status = 'active'{where}",
            (user_id, *params),
        )
        if row is None or row[0] is None:
            return None
        return int(row[0]), int(row[1])
