"""The keyword index of the Neo4j record store: a Lucene full-text index over pre-tokenised terms.

Each record node carries its own words (``terms``) and its context (``context``,
the previous turns of its session) as text already tokenised by
:func:`dreammem.text.tokenize.tokenize`, the same terms the SQLite store indexes:
Chinese is segmented before it reaches the server, so the index uses Lucene's
``whitespace`` analyzer and needs no language analyzer. A third indexed property,
``scope``, is the hashed user id while the record is active (absent otherwise);
every query requires it, so Lucene ranks only this user's active records and no
over-fetching is needed unless a time window filters further.

Ranking is Lucene's BM25 over both fields, the context field boosted by
``context_weight``. Rows holding every query term answer alone when there are
``limit`` of them (as in the SQLite store); ``max_term_share`` leaves frequent
terms out of the OR query. The SQLite store's pair and newest-window shortcuts are
FTS5 cost savings Lucene does not need.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from dreammem.stores.fts_query import TermShares
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_records import scope_of

__all__ = ["TEXT_INDEX", "KeywordNodes", "lucene_term"]

TEXT_INDEX = "dm_record_text"
_HEADROOM = 4

_SEARCH = """
CALL db.index.fulltext.queryNodes($index, $query, {limit: $fetch}) YIELD node, score
WITH collect({node: node, score: score}) AS hits
RETURN size(hits) AS seen,
  [h IN hits WHERE h.node.user_id = $user_id AND h.node.status = 'active'
     AND ($since IS NULL OR h.node.event_time >= $since)
     AND ($until IS NULL OR h.node.event_time < $until) | [h.node.rowid, h.score]][..$limit] AS found
"""


def lucene_term(term: str) -> str:
    """One term as a quoted Lucene phrase (user text never reaches the parser unescaped)."""
    return '"' + term.replace("\\", "\\\\").replace('"', '\\"') + '"'


class KeywordNodes:
    """Keyword search and keyword terms of ``(:DMRecord)`` nodes.

    Args:
        client: The server connection.
        context_weight: The boost of the context field (own words weigh 1.0).
    """

    def __init__(self, client: Neo4jClient, context_weight: float = 0.5) -> None:
        self.client = client
        self.context_weight = float(context_weight)
        self._term_shares = TermShares(self._indexed_rows, self._fts_count)

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
        """BM25 over this user's active records: ``(rowid, score)``, best first."""
        terms = [t for t in dict.fromkeys(terms) if t]
        if not terms or limit <= 0:
            return []
        scope = f"+scope:{lucene_term(scope_of(user_id))}"
        if len(terms) > 1:
            every = " ".join(f"+({self._either(t)})" for t in terms)
            rows = self._search(f"{scope} {every}", user_id, limit, since, until)
            if len(rows) >= limit:
                return rows
        if max_term_share is not None:
            terms = self._term_shares.rare(terms, max_term_share) or terms
        anyof = " ".join(self._either(t) for t in terms)
        return self._search(f"{scope} +({anyof})", user_id, limit, since, until)

    def _search(
        self, query: str, user_id: str, limit: int, since: datetime | None, until: datetime | None
    ) -> list[tuple[int, float]]:
        """Run one Lucene query; ask for more while a time window filters too many out."""
        fetch = limit if since is None and until is None else limit * _HEADROOM
        while True:
            rows = self.client.run(
                "keyword_search",
                _SEARCH,
                index=TEXT_INDEX,
                query=query,
                fetch=fetch,
                user_id=user_id,
                since=_iso(since),
                until=_iso(until),
                limit=limit,
            )
            found = [(int(rowid), float(score)) for rowid, score in rows[0]["found"]]
            if len(found) >= limit or int(rows[0]["seen"]) < fetch:
                return found
            fetch *= _HEADROOM

    def _indexed_rows(self) -> int:
        return int(self.client.scalar("indexed_rows", "MATCH (r:DMRecord) RETURN count(r)") or 0)

    def _fts_count(self, phrase: str, cap: int) -> int:
        """Rows holding one term (given as an FTS5 phrase by :class:`TermShares`), up to ``cap``."""
        term = phrase[1:-1].replace('""', '"')
        value = self.client.scalar(
            "term_count",
            "CALL db.index.fulltext.queryNodes($index, $query, {limit: $cap}) YIELD node RETURN count(node)",
            index=TEXT_INDEX,
            query=self._either(term),
            cap=cap,
        )
        return int(value or 0)

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
            "MATCH (r:DMRecord {user_id: $user_id}) WHERE r.status = 'active' "
            "AND ($since IS NULL OR r.event_time >= $since) AND ($until IS NULL OR r.event_time < $until) "
            f"RETURN r.rowid AS rowid ORDER BY r.event_time {order} LIMIT $limit",
            user_id=user_id,
            since=_iso(since),
            until=_iso(until),
            limit=limit,
        )
        return [int(r["rowid"]) for r in rows]

    def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
        """Replace one record's keyword terms and context terms."""
        self.client.run(
            "set_match_text",
            "MATCH (r:DMRecord {rowid: $rowid}) SET r.terms = $terms, r.context = $context",
            rowid=rowid,
            terms=terms,
            context=context,
        )
        self._term_shares.note_writes(1)

    def set_match_terms(self, rowid: int, terms: str) -> None:
        """Replace one record's own keyword terms, keeping its context terms."""
        self.client.run(
            "set_match_terms",
            "MATCH (r:DMRecord {rowid: $rowid}) SET r.terms = $terms",
            rowid=rowid,
            terms=terms,
        )
        self._term_shares.note_writes(1)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).isoformat()
