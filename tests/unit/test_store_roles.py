"""The record-store contract is its roles: each method in one small role, capabilities typed (issue 37)."""

from __future__ import annotations

import inspect
from abc import ABC
from collections.abc import Sequence
from datetime import datetime

import pytest

from dreammem.stores import base
from dreammem.stores.base import (
    REQUIRED_CAPABILITIES,
    GraphCapability,
    KeywordIndex,
    RecordCapability,
    RecordStore,
    VectorCapability,
)
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore

ROLES = [cls for cls in RecordStore.__mro__[1:] if cls not in (ABC, object)]


def _declared(role: type) -> set[str]:
    return {name for name, value in vars(role).items() if callable(value) or isinstance(value, property)}


def test_the_record_store_is_its_roles_and_nothing_else() -> None:
    assert [r.__name__ for r in RecordStore.__bases__] == [r.__name__ for r in ROLES]
    own = {n for n in _declared(RecordStore) if not n.startswith("_")}
    assert own == {"recent_vectors", "surroundings"}  # its defaults that read several roles


def test_every_method_is_declared_by_exactly_one_role() -> None:
    owners: dict[str, list[str]] = {}
    for role in ROLES:
        for name in _declared(role) - {"__init__"}:
            owners.setdefault(name, []).append(role.__name__)
    assert {n: o for n, o in owners.items() if len(o) > 1} == {}
    public = {n for n in dir(RecordStore) if not n.startswith("_") and n != "capabilities"}
    assert public == set(owners)
    assert RecordStore.__abstractmethods__ <= set(owners)


@pytest.mark.parametrize("role", ROLES, ids=lambda r: r.__name__)
def test_each_role_is_small_and_has_its_own_module(role: type) -> None:
    assert 1 <= len(_declared(role)) <= 14
    assert role.__module__.startswith("dreammem.stores.roles.")
    assert getattr(base, role.__name__) is role  # one import path: dreammem.stores.base


def test_both_backends_take_every_role() -> None:
    from dreammem.stores.neo4j_store import Neo4jRecordStore  # noqa: PLC0415 - the neo4j extra is optional

    for backend in (SQLiteRecordStore, Neo4jRecordStore):
        assert all(issubclass(backend, role) for role in ROLES), backend
        assert not inspect.isabstract(backend), backend


def test_a_role_stands_alone() -> None:
    """A component that needs one role is typed against it; it carries no other role's methods."""

    class Words(KeywordIndex):
        def __init__(self) -> None:
            self.terms: dict[int, str] = {}

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
            return [(i, 1.0) for i, t in self.terms.items() if set(terms) & set(t.split())][:limit]

        def set_match_text(self, rowid: int, terms: str, context: str = "") -> None:
            self.terms[rowid] = f"{terms} {context}"

        def set_match_terms(self, rowid: int, terms: str) -> None:
            self.terms[rowid] = terms

    words = Words()
    words.set_match_terms(7, "kayak fjord")
    assert words.keyword_search("u", ["fjord"], 5) == [(7, 1.0)]
    assert not hasattr(words, "insert")


def test_capabilities_are_typed_and_still_read_as_the_old_strings() -> None:
    declared = SQLiteRecordStore.capabilities
    assert all(isinstance(c, RecordCapability) for c in declared)
    assert declared == REQUIRED_CAPABILITIES | {RecordCapability.GROUNDED_TIMES}
    assert "grounded_times" in declared and "shared" not in declared  # a reader of the old strings
    assert {str(c) for c in declared} == {"fts", "transactions", "vectors", "queue", "grounded_times"}


def test_every_stores_capabilities_are_typed() -> None:
    from dreammem.stores.neo4j import Neo4jGraphStore  # noqa: PLC0415 - the neo4j extra is optional
    from dreammem.stores.neo4j_shared_graph import SharedNeo4jGraphStore  # noqa: PLC0415 - same
    from dreammem.stores.neo4j_store import Neo4jRecordStore  # noqa: PLC0415 - same

    declared = {
        Neo4jRecordStore: RecordCapability,
        EmbeddedGraphStore: GraphCapability,
        Neo4jGraphStore: GraphCapability,
        SharedNeo4jGraphStore: GraphCapability,
        FaissVectorIndex: VectorCapability,
    }
    for store, kind in declared.items():
        assert store.capabilities and all(isinstance(c, kind) for c in store.capabilities), store
    optional = {RecordCapability.SHARED, RecordCapability.GATHERED_READS, RecordCapability.GROUNDED_TIMES}
    assert Neo4jRecordStore.capabilities == REQUIRED_CAPABILITIES | optional
    assert GraphCapability.TRANSACTIONAL in SharedNeo4jGraphStore.capabilities
    assert GraphCapability.TRANSACTIONAL not in Neo4jGraphStore.capabilities
