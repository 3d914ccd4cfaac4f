"""Embeddings on Neo4j: stored on the record nodes, searched through a Neo4j vector index.

* :class:`EmbeddingNodes` is the record store's embedding part: each record node
  holds its embedding (``embedding``, a float list) and the model that made it, in
  the record's own transaction.
* :class:`Neo4jVectorIndex` is the :class:`~dreammem.stores.base.VectorIndex`
  contract on ``(:DMVector)`` nodes of its own (the conformance suite runs on it).
* :class:`RecordVectorIndex` is the index the engine searches: the vector index on
  the record nodes themselves, so it is always as current as the records (no
  derived file, nothing to refresh across processes or hosts).

User scope, picked by the server's version when an index is opened:

* Neo4j 2026.01 and later (:data:`FILTERED_SINCE`) filter inside the search: the
  vector index carries the scope's properties (``CREATE VECTOR INDEX ... WITH
  [n.user_id, n.status]``) and a Cypher 25 ``SEARCH ... WHERE`` asks it for
  ``k * inside_overfetch`` of this user's (active) nodes only (a batch's queries in one
  statement, one ``SEARCH`` per query inside a ``CALL`` subquery).
* Neo4j 5.26's vector index cannot filter inside the search. A search asks the
  index for more neighbours than wanted (``k * OVERFETCH``, at least
  ``MIN_FETCH``), keeps this user's (active) nodes, and when fewer than ``k``
  survive and the index had more to give, or when the k-th ties with the lowest score
  the index gave (the tie may run on past it; lower row id first, stores/ties.py),
  ranks the user's own vectors exactly with ``vector.similarity.cosine`` instead; that
  fallback costs O(the user's vectors), a batch's in parts of bounded server memory
  (:mod:`dreammem.stores.neo4j_exact`).

Results are always this user's only. The index (HNSW, quantised) only picks the
candidates: their scores are recomputed exactly, cosine similarities in [-1, 1]
(Neo4j reports ``(1 + cos) / 2``; converted back).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from dreammem.errors import ConfigError
from dreammem.stores.base import VectorIndex
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem.stores.neo4j_exact import rank_exactly
from dreammem.stores.neo4j_vector_cypher import leaving_out, over_fetch
from dreammem.stores.ties import best_first

__all__ = [
    "FILTERED_SINCE",
    "MIN_FETCH",
    "OVERFETCH",
    "RECORD_FILTERS",
    "EmbeddingNodes",
    "Neo4jVectorIndex",
    "RecordVectorIndex",
    "filters_inside",
]

OVERFETCH = 8
"""Neighbours asked of the vector index per result wanted, before the user filter."""
MIN_FETCH = 64
RECORD_INDEX = "dm_record_embedding"
RECORD_FILTERS = ("user_id", "status")
"""The record index's scope properties (filtered inside the search from :data:`FILTERED_SINCE`)."""
FILTERED_SINCE = (2026, 1)
"""The first Neo4j version whose vector search filters by properties inside the index."""


def filters_inside(client: Neo4jClient) -> bool:
    """Whether this server filters a vector search inside the index (Cypher 25 ``SEARCH ... WHERE``)."""
    return client.server_version() >= FILTERED_SINCE


def ensure_vector_index(
    client: Neo4jClient, name: str, label: str, prop: str, dim: int, filters: Sequence[str] = ()
) -> None:
    """Create a cosine vector index of this dimension, filtering on ``filters`` where the server can.

    An index of another dimension is dropped first, and so is one without the filter
    properties on a server that filters inside the search (a database from 5.26).
    """
    if not (isinstance(dim, int) and dim > 0):
        raise ConfigError(f"a vector dimension must be a positive integer, got {dim!r}")
    inside = bool(filters) and filters_inside(client)
    rows = client.run(
        "show_vector_index",
        "SHOW VECTOR INDEXES YIELD name, options, properties WHERE name = $name "
        "RETURN options.indexConfig['vector.dimensions'] AS dim, properties",
        name=name,
    )
    if rows and int(rows[0]["dim"]) == dim:
        have = list(rows[0]["properties"])
        # Without filters inside, an index that also carries them serves as well.
        if (have == [prop, *filters]) if inside else (have[:1] == [prop]):
            return
    statements = [f"DROP INDEX {name} IF EXISTS"] if rows else []
    scope = f"WITH [{', '.join(f'n.{f}' for f in filters)}] " if inside else ""
    statements += [
        f"{'CYPHER 25 ' if inside else ''}CREATE VECTOR INDEX {name} IF NOT EXISTS FOR (n:{label}) "
        f"ON (n.{prop}) {scope}OPTIONS "
        f"{{indexConfig: {{`vector.dimensions`: {dim}, `vector.similarity_function`: 'cosine'}}}}",
        "CALL db.awaitIndexes(300)",
    ]
    client.schema(statements)


class EmbeddingNodes:
    """Stored embeddings of the record store (see the module docstring)."""

    def __init__(self, client: Neo4jClient) -> None:
        self.client = client
        self._indexed_dim: int | None = None

    def put_vectors(self, rowids: Sequence[int], model: str, vectors: npt.NDArray[np.float32]) -> None:
        """Store embeddings of these rows for this model (replacing older ones)."""
        if not len(rowids):
            return
        data = np.asarray(vectors, dtype=np.float32)
        if self._indexed_dim != data.shape[1]:
            ensure_vector_index(
                self.client, RECORD_INDEX, "DMRecord", "embedding", int(data.shape[1]), RECORD_FILTERS
            )
            self._indexed_dim = int(data.shape[1])
        self.client.run(
            "put_vectors",
            "UNWIND $rows AS row MATCH (r:DMRecord {rowid: row.rowid}) "
            "SET r.embedding = row.vec, r.embedding_model = $model",
            rows=[{"rowid": int(rid), "vec": data[n].tolist()} for n, rid in enumerate(rowids)],
            model=model,
        )

    def clear_vectors(self) -> None:
        """Drop every embedding and the model name and dimension they were made with."""
        with self.client.transaction():
            self.client.run(
                "clear_vectors",
                "MATCH (r:DMRecord) WHERE r.embedding IS NOT NULL REMOVE r.embedding, r.embedding_model",
            )
            self.client.run(
                "clear_vectors",
                "MATCH (m:DMMeta) WHERE m.key IN ['embedding_model', 'embedding_dim'] DELETE m",
            )
        self.client.schema([f"DROP INDEX {RECORD_INDEX} IF EXISTS"])
        self._indexed_dim = None

    def iter_active_vectors(
        self, model: str, dim: int, batch: int = 10_000
    ) -> Iterator[tuple[str, list[int], npt.NDArray[np.float32]]]:
        """Embeddings of active records as ``(user_id, rowids, matrix)`` batches."""
        after = -1
        while True:
            rows = self.client.run(
                "iter_active_vectors",
                "MATCH (r:DMRecord) WHERE r.rowid > $after AND r.status = 'active' "
                "AND r.embedding_model = $model RETURN r.user_id AS u, r.rowid AS rowid, r.embedding AS vec "
                "ORDER BY r.rowid LIMIT $batch",
                after=after,
                model=model,
                batch=batch,
            )
            if not rows:
                return
            after = int(rows[-1]["rowid"])
            by_user: dict[str, tuple[list[int], list[list[float]]]] = {}
            for row in rows:
                ids, vecs = by_user.setdefault(str(row["u"]), ([], []))
                ids.append(int(row["rowid"]))
                vecs.append(row["vec"])
            for user_id, (ids, vecs) in sorted(by_user.items()):
                yield user_id, ids, np.asarray(vecs, dtype=np.float32).reshape(len(ids), dim)

    def vectors_of(self, user_id: str, model: str, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored embeddings of these records of this user, by record id."""
        rows = self.client.run(
            "vectors_of",
            "UNWIND $ids AS id MATCH (r:DMRecord {id: id}) WHERE r.user_id = $user_id "
            "AND r.embedding_model = $model RETURN r.id AS id, r.embedding AS vec",
            ids=list(dict.fromkeys(ids)),
            user_id=user_id,
            model=model,
        )
        return {str(r["id"]): np.asarray(r["vec"], dtype=np.float32) for r in rows}

    def rows_missing_vectors(self, model: str) -> list[tuple[int, str, str]]:
        """Active records with no embedding from this model: ``(rowid, user_id, id)``."""
        rows = self.client.run(
            "rows_missing_vectors",
            "MATCH (r:DMRecord) WHERE r.status = 'active' "
            "AND (r.embedding_model IS NULL OR r.embedding_model <> $model) "
            "RETURN r.rowid AS rowid, r.user_id AS u, r.id AS id ORDER BY rowid",
            model=model,
        )
        return [(int(r["rowid"]), str(r["u"]), str(r["id"])) for r in rows]

    def count_vectors(self, model: str, user_id: str | None = None) -> int:
        """How many active records (of one user) have an embedding from this model."""
        value = self.client.scalar(
            "count_vectors",
            "MATCH (r:DMRecord) WHERE r.status = 'active' AND r.embedding_model = $model "
            "AND ($user_id IS NULL OR r.user_id = $user_id) RETURN count(r)",
            model=model,
            user_id=user_id,
        )
        return int(value or 0)


class _SearchNodes(VectorIndex):
    """Nearest neighbours among nodes of one label, always inside one user's scope."""

    _label: str
    _prop: str
    _index: str
    _active_only: bool
    _filters: tuple[str, ...]
    inside_overfetch = 4
    """Where the index filters inside the search: candidates asked per result wanted.

    At least :attr:`inside_min_fetch`, ranked exactly; 4 measured recall@10 0.9995 against exact,
    2 measured 0.993 (docs/BENCHMARKS.md, session 23).
    """
    inside_min_fetch = 40
    """The fewest candidates asked of an index that filters inside (small ``k``)."""

    def __init__(self, client: Neo4jClient, dim: int) -> None:
        self.client = client
        self._dim = int(dim)
        self.filtered_inside = filters_inside(client)
        """Whether searches filter inside the index (picked by the server's version)."""

    @property
    def dim(self) -> int:
        """The embedding dimension."""
        return self._dim

    @property
    def _params(self) -> dict[str, str]:
        """Parameters the scope condition needs besides the user id."""
        return {}

    @property
    def _by_rowid(self) -> str:
        """The node of row id ``rid``, by an index seek (the planner may scan otherwise)."""
        return f"MATCH (n:{self._label} {{rowid: rid}}) USING INDEX n:{self._label}(rowid)"

    @property
    def _where(self) -> str:
        active = " AND n.status = 'active'" if self._active_only else ""
        return f"n.user_id = $user_id AND n.{self._prop} IS NOT NULL{active}"

    @property
    def _inside_where(self) -> str:
        """The scope as the ``SEARCH`` filter: equalities on the index's filter properties only."""
        active = " AND n.status = 'active'" if self._active_only else ""
        return f"n.user_id = $user_id{active}"

    def search(self, user_id: str, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` nearest of this user's vectors, best first (see the module docstring)."""
        return self.search_many(user_id, np.asarray(query, dtype=np.float32).reshape(1, -1), k)[0]

    def search_many(
        self, user_id: str, queries: npt.NDArray[np.float32], k: int
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search` for each row of ``queries``: one statement for all, one more for the exact ones.

        The write path asks for the neighbours of a whole batch's statements at once; one
        round trip each was most of a Neo4j write (docs/BENCHMARKS.md, session 26). Each
        query's answer is the one it gets alone: the same candidates, the same cut, the same
        exact ranking where the index gave too few (:meth:`search` is a batch of one).
        """
        return self.search_stored(user_id, queries, k, written=range(0))

    def search_stored(
        self, user_id: str, queries: npt.NDArray[np.float32], k: int, *, written: range
    ) -> list[list[tuple[int, float]]]:
        """:meth:`search_many` leaving out the row ids ``written`` (a write's own, in its transaction).

        The exact ranking sees the write's new nodes (the 5.26 index does not): they took the
        places of the older records the write path asks for, and it asked again, for more.
        """
        vectors = [np.asarray(q, dtype=np.float32).reshape(-1).tolist() for q in queries]
        if k <= 0 or not vectors:
            return [[] for _ in vectors]
        search = self._search_inside if self.filtered_inside else self._search_over
        out = search(user_id, vectors, k, written)
        exact = [n for n, found in enumerate(out) if found is None]
        ranked = self._exact_many(user_id, [vectors[n] for n in exact], k, written)
        for n, found in zip(exact, ranked, strict=True):
            out[n] = found
        return [found or [] for found in out]

    def _search_over(
        self, user_id: str, vectors: list[list[float]], k: int, skip: range
    ) -> list[list[tuple[int, float]] | None]:
        """5.26: each query's ``k`` best of the index's unfiltered neighbours; None where exact is needed."""
        fetch = max(k * OVERFETCH, MIN_FETCH)
        skipping, skip_params = leaving_out(skip)
        rows = self.client.run(
            "vector_search_many",
            over_fetch(self._prop, f"{self._where}{skipping}", batch=len(vectors) > 1),
            index=self._index,
            fetch=fetch,
            queries=vectors,
            user_id=user_id,
            **self._params,
            **skip_params,
        )
        # A query without a row had no candidate (an empty index): none of the user's to find.
        out: list[list[tuple[int, float]] | None] = [[] for _ in vectors]
        for row in rows:
            ranked = best_first((int(rid), 2.0 * float(s) - 1.0) for rid, s in row["found"])
            out[int(row["i"])] = None
            if int(row["seen"]) < fetch or (
                len(ranked) >= k and ranked[k - 1][1] > 2.0 * float(row["floor"]) - 1.0
            ):
                out[int(row["i"])] = ranked[:k]
        return out

    def _exact_many(
        self, user_id: str, vectors: list[list[float]], k: int, skip: range
    ) -> list[list[tuple[int, float]]]:
        """The ``k`` nearest of all the user's vectors (but ``skip``) for each of ``vectors``, exactly."""
        skipping, skip_params = leaving_out(skip)
        params = {"user_id": user_id, **self._params, **skip_params}
        ranked = rank_exactly(
            self.client, self._label, self._prop, f"{self._where}{skipping}", params, vectors, k
        )
        return [[(rowid, 2.0 * score - 1.0) for rowid, score in found] for found in ranked]

    def _search_inside(
        self, user_id: str, vectors: list[list[float]], k: int, skip: range
    ) -> list[list[tuple[int, float]] | None]:
        """2026.01+: each query's candidates of this user only, from the index, ranked exactly.

        None where the index had more to give and the k-th score ties the last candidate's: the
        tie may run on past the candidates, so the user's vectors are ranked exactly instead
        (ties: stores/ties.py). The row ids ``skip`` are left out after the search (``SEARCH``
        filters on the index's properties only); too few left where the index had more: exact.
        """
        fetch = max(k * self.inside_overfetch, self.inside_min_fetch)
        rows = self.client.run(
            "vector_search_many",
            # Cypher 25 takes a SEARCH inside a CALL subquery: one index search per query row.
            "CYPHER 25 UNWIND range(0, size($queries) - 1) AS i WITH i, $queries[i] AS q CALL (i, q) { "
            f"MATCH (n:{self._label}) SEARCH n IN (VECTOR INDEX {self._index} FOR q "
            f"WHERE {self._inside_where} LIMIT $fetch) "
            f"RETURN collect([n.rowid, vector.similarity.cosine(n.{self._prop}, q)]) AS found "
            "} RETURN i, found ORDER BY i",
            fetch=fetch,
            queries=vectors,
            user_id=user_id,
            **self._params,
        )
        out: list[list[tuple[int, float]] | None] = [None] * len(vectors)
        for row in rows:
            ranked = best_first((int(rid), 2.0 * float(s) - 1.0) for rid, s in row["found"])
            kept = [hit for hit in ranked if hit[0] not in skip]
            if len(ranked) < fetch or (len(kept) > k and kept[k - 1][1] > ranked[-1][1]):
                out[int(row["i"])] = kept[:k]
        return out

    def search_subset(
        self, user_id: str, query: npt.NDArray[np.float32], ids: Sequence[int], k: int
    ) -> list[tuple[int, float]]:
        """The ``k`` nearest of the given row ids (inside this user's scope), ranked exactly."""
        if k <= 0 or not ids:
            return []
        vector = np.asarray(query, dtype=np.float32).reshape(-1).tolist()
        # Looked up by row id (an index seek each): matching the user's nodes and keeping
        # those in ids read every vector node of the user (~250 ms at 10,000).
        rows = self.client.run(
            "vector_exact",
            f"UNWIND $ids AS rid CALL (rid) {{ {self._by_rowid} WHERE {self._where} RETURN n }} "
            f"WITH n, vector.similarity.cosine(n.{self._prop}, $query) AS score "
            "RETURN n.rowid AS rowid, score ORDER BY score DESC, rowid ASC LIMIT $k",  # ties: stores/ties.py
            user_id=user_id,
            ids=list(dict.fromkeys(int(i) for i in ids)),
            query=vector,
            k=k,
            **self._params,
        )
        return [(int(r["rowid"]), 2.0 * float(r["score"]) - 1.0) for r in rows]

    def count(self, user_id: str | None = None) -> int:
        """How many vectors the index holds (for one user, or in all)."""
        where = self._where.replace("n.user_id = $user_id AND ", "")
        value = self.client.scalar(
            "vector_count",
            f"MATCH (n:{self._label}) WHERE ($user_id IS NULL OR n.user_id = $user_id) AND {where} "
            "RETURN count(n)",
            user_id=user_id,
            **self._params,
        )
        return int(value or 0)


class Neo4jVectorIndex(_SearchNodes):
    """The vector index contract on ``(:DMVector)`` nodes (one vector index per dimension).

    Args:
        client: The server connection.
        dim: The embedding dimension.
        name: The index's name: indexes of different names share the nodes' label
            but never each other's vectors.
    """

    _label = "DMVector"
    _active_only = False
    _filters = ("index_name", "user_id")

    def __init__(self, client: Neo4jClient, dim: int, *, name: str = "default") -> None:
        super().__init__(client, dim)
        self._prop = f"embedding_{self._dim}"
        self._index = f"dm_vector_{self._dim}"
        self.name = name
        # Adding MERGEs on (index_name, rowid): without this index each row scans every vector node.
        client.schema(
            ["CREATE INDEX dm_vector_key IF NOT EXISTS FOR (n:DMVector) ON (n.index_name, n.rowid)"]
        )
        ensure_vector_index(client, self._index, self._label, self._prop, self._dim, self._filters)

    @property
    def _where(self) -> str:
        return f"n.index_name = $name AND {super()._where}"

    @property
    def _inside_where(self) -> str:
        return f"n.index_name = $name AND {super()._inside_where}"

    @property
    def _by_rowid(self) -> str:
        return "MATCH (n:DMVector {index_name: $name, rowid: rid}) USING INDEX n:DMVector(index_name, rowid)"

    def add(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Add (or replace) the vectors of these row ids for this user."""
        data = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self._dim)
        self.client.run(
            "vector_add",
            f"UNWIND $rows AS row MERGE (n:DMVector {{index_name: $name, rowid: row.rowid}}) "
            f"SET n.user_id = $user_id, n.{self._prop} = row.vec",
            rows=[{"rowid": int(i), "vec": data[n].tolist()} for n, i in enumerate(ids)],
            name=self.name,
            user_id=user_id,
        )

    def remove(self, ids: Sequence[int]) -> None:
        """Remove the vectors of these row ids (unknown ids are ignored)."""
        self.client.run(
            "vector_remove",
            "MATCH (n:DMVector {index_name: $name}) WHERE n.rowid IN $ids DELETE n",
            name=self.name,
            ids=[int(i) for i in ids],
        )

    def reset(self) -> None:
        """Drop every vector of this index."""
        self.client.run("vector_reset", "MATCH (n:DMVector {index_name: $name}) DELETE n", name=self.name)

    @property
    def _params(self) -> dict[str, str]:
        return {"name": self.name}


class RecordVectorIndex(_SearchNodes):
    """The engine's vector index on the Neo4j backend: the vector index on the record nodes.

    The record store writes each embedding with its record, in the record's
    transaction (:meth:`EmbeddingNodes.put_vectors`), and a record leaves the index's
    scope with its status, so :meth:`add` only rewrites embeddings and :meth:`remove`
    and :meth:`reset` have nothing to drop: searches see active records only.
    """

    _label = "DMRecord"
    _prop = "embedding"
    _index = RECORD_INDEX
    _active_only = True
    _filters = RECORD_FILTERS

    def add(self, user_id: str, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Rewrite the embeddings of these records of this user (their model stays)."""
        data = np.asarray(vectors, dtype=np.float32).reshape(len(ids), self._dim)
        self.client.run(
            "vector_add",
            "UNWIND $rows AS row MATCH (n:DMRecord {rowid: row.rowid}) WHERE n.user_id = $user_id "
            "SET n.embedding = row.vec",
            rows=[{"rowid": int(i), "vec": data[n].tolist()} for n, i in enumerate(ids)],
            user_id=user_id,
        )

    def remove(self, ids: Sequence[int]) -> None:
        """Nothing to do: an inactive record is outside every search already."""

    def reset(self) -> None:
        """Nothing to do: the index is the records' own (``clear_vectors`` drops embeddings)."""
