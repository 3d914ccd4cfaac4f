"""The graph store conformance suite: every GraphStore backend must pass it.

Subclass :class:`GraphStoreSuite` in a ``test_*.py`` module and override the
``graph_store`` fixture (as langchain's standard tests do). Each test works in fresh
user ids and the suite clears them afterwards, so a shared server stays clean.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from dreammem.stores.base import (
    GraphCapability,
    GraphEntity,
    GraphItem,
    GraphRelation,
    GraphStats,
    GraphStore,
)
from dreammem.stores.embedded_graph import EmbeddedGraphStore
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.text.entities import normalize_entity

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

HOSTILE_NAMES = [
    "O'Brien \"the 'quoted' one\"",
    "`backtick` name``",
    "})",
    "MATCH (n) DETACH DELETE n",
    "'}) MATCH (n) DETACH DELETE n //",
    "$user_id {user_id: 'other'}",
    "\\'; DROP TABLE graph_entities; --",
    "x" * 10_000,
]


def ent(name: str, kind: str = "name") -> GraphEntity:
    """An entity keyed the way the write path keys it."""
    return GraphEntity(key=normalize_entity(name), name=name, kind=kind)


def item(
    memory_id: str, *names: str, minutes: int = 0, relations: tuple[GraphRelation, ...] = ()
) -> GraphItem:
    return GraphItem(memory_id, tuple(ent(n) for n in names), relations, T0 + timedelta(minutes=minutes))


class GraphStoreSuite:
    """Abstract conformance tests; override :meth:`graph_store`."""

    @pytest.fixture
    def graph_store(self) -> Iterator[GraphStore]:
        raise NotImplementedError("override the graph_store fixture")

    @pytest.fixture
    def users(self, graph_store: GraphStore) -> Iterator[tuple[str, str]]:
        """Two fresh user ids, cleared after the test."""
        pair = (f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}")
        yield pair
        for user in pair:
            graph_store.clear(user)

    @pytest.fixture
    def user(self, users: tuple[str, str]) -> str:
        return users[0]

    # -- writes and reads ---------------------------------------------------------

    def test_upsert_then_read_back(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [item("m1", "Caroline", "Rex"), item("m2", "Rex", "Portland", minutes=1)])
        assert graph_store.stats(user) == GraphStats(memories=2, entities=3, mentions=4, relations=0)
        found = graph_store.entities_of(user, ["m1", "m2", "unknown"])
        assert set(found) == {"m1", "m2"}
        assert [e.name for e in found["m1"]] == ["Caroline", "Rex"]
        assert found["m2"] == (ent("Portland"), ent("Rex"))
        total, df = graph_store.entity_stats(user, ["rex", "caroline", "nobody"])
        assert (total, df) == (2, {"rex": 2, "caroline": 1})
        assert graph_store.entity_keys(user, ["rex", "nobody", "portland"]) == {"rex", "portland"}

    def test_memories_of_is_newest_first_and_bounded(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [item(f"m{i}", "Rex", minutes=i) for i in range(5)])
        graph_store.upsert(user, [item("z", "Caroline", minutes=9)])
        assert graph_store.memories_of(user, ["rex", "caroline"], per_entity=3) == [
            ("rex", "m4"),
            ("rex", "m3"),
            ("rex", "m2"),
            ("caroline", "z"),
        ]
        assert graph_store.memories_of(user, [], per_entity=3) == []

    def test_memory_without_entities_is_a_node(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [GraphItem("lonely", ())])
        assert graph_store.stats(user) == GraphStats(memories=1)
        graph_store.remove(user, ["lonely"])
        assert graph_store.stats(user).empty

    # -- traversal ------------------------------------------------------------------

    def test_one_hop(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(
            user,
            [item("a", "Caroline", "Rex"), item("b", "Melanie", "Paris", minutes=1), item("c", "Caroline")],
        )
        hits = graph_store.neighbors(user, ["caroline"], hops=1)
        assert {h.memory_id for h in hits} == {"a", "c"}
        assert all(h.hops == 1 and h.via == ("caroline",) for h in hits)
        assert graph_store.neighbors(user, ["nobody"]) == []
        assert graph_store.neighbors(user, []) == []

    def test_two_hops_rank_below_one_hop(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(
            user,
            [
                item("adopt", "Caroline", "Rex"),  # Caroline -> Rex
                item("beach", "Rex", "Cannon Beach", minutes=1),  # Rex -> beach: two hops from Caroline
                item("far", "Cannon Beach", "Oregon", minutes=2),  # three hops: never reached
                item("other", "Melanie", minutes=3),
            ],
        )
        one = graph_store.neighbors(user, ["caroline"], hops=1)
        assert [h.memory_id for h in one] == ["adopt"]
        two = graph_store.neighbors(user, ["caroline"], hops=2)
        assert [h.memory_id for h in two] == ["adopt", "beach"]
        assert [h.hops for h in two] == [1, 2]
        assert two[0].score > two[1].score > 0
        assert two[1].via == ("caroline", "rex")

    def test_more_matched_entities_rank_higher(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(
            user,
            [
                item("both", "Caroline", "Rex"),
                item("one", "Caroline", minutes=5),
                item("x", "Rex", minutes=6),
            ],
        )
        hits = graph_store.neighbors(user, ["caroline", "rex"], hops=1)
        assert hits[0].memory_id == "both"
        assert {h.memory_id for h in hits} == {"both", "one", "x"}

    def test_relation_edges_bridge_two_hops(self, graph_store: GraphStore, user: str) -> None:
        if GraphCapability.RELATIONS not in graph_store.capabilities:
            pytest.skip("backend stores no relation edges")
        works = GraphRelation("tom becker", "works_at", "northwind")
        graph_store.upsert(
            user,
            [
                item("rel", "Tom Becker", "Northwind", relations=(works,)),
                item("nw", "Northwind", "Seattle", minutes=1),
            ],
        )
        assert graph_store.stats(user).relations == 1
        assert graph_store.related(user, ["northwind"]) == [("northwind", "works_at", "tom becker")]
        assert graph_store.related(user, ["tom becker"]) == [("tom becker", "works_at", "northwind")]
        hits = graph_store.neighbors(user, ["tom becker"], hops=2)
        assert [(h.memory_id, h.hops) for h in hits] == [("rel", 1), ("nw", 2)]

    def test_relation_endpoints_count_as_mentions(self, graph_store: GraphStore, user: str) -> None:
        if GraphCapability.RELATIONS not in graph_store.capabilities:
            pytest.skip("backend stores no relation edges")
        graph_store.upsert(user, [GraphItem("r", (), (GraphRelation("ann", "knows", "bo"),), T0)])
        assert graph_store.entity_keys(user, ["ann", "bo"]) == {"ann", "bo"}
        graph_store.remove(user, ["r"])
        assert graph_store.stats(user).empty

    def test_hub_entities_do_not_flood(self, graph_store: GraphStore, user: str) -> None:
        # The user's own name is in every memory; it must not seed or bridge the walk.
        items = [item(f"h{i}", "Mia", f"Topic{i}", minutes=i) for i in range(60)]
        items.append(item("rare", "Mia", "Zanzibar", minutes=100))
        graph_store.upsert(user, items)
        assert graph_store.neighbors(user, ["mia"]) == []
        hits = graph_store.neighbors(user, ["mia", "zanzibar"], hops=2)
        assert [h.memory_id for h in hits] == ["rare"]

    def test_limit(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [item(f"m{i:02d}", "Rex", minutes=i) for i in range(12)])
        hits = graph_store.neighbors(user, ["rex"], limit=5)
        assert [h.memory_id for h in hits] == ["m11", "m10", "m09", "m08", "m07"]

    def test_same_graph_ranks_like_the_reference(self, graph_store: GraphStore, user: str) -> None:
        """Every backend ranks a graph exactly like the embedded reference store."""
        items = [
            item("a", "Caroline", "Rex", "Portland"),
            item("b", "Rex", "Cannon Beach", minutes=1),
            item("c", "Melanie", "Portland", minutes=2),
            item("d", "Melanie", "Pottery", minutes=3),
            item("e", "Caroline", "Pottery", minutes=4),
            item("f", "Oregon", minutes=5),
        ]
        reference = EmbeddedGraphStore(SQLiteRecordStore(":memory:"))
        reference.upsert(user, items)
        graph_store.upsert(user, items)
        for keys in (["caroline"], ["rex", "melanie"], ["pottery"], ["oregon"]):
            for hops in (1, 2):
                assert graph_store.neighbors(user, keys, hops=hops) == reference.neighbors(
                    user, keys, hops=hops
                )

    async def test_async_twins_agree(self, graph_store: GraphStore, user: str) -> None:
        await graph_store.aupsert(user, [item("a", "Caroline", "Rex"), item("b", "Rex", minutes=1)])
        sync = graph_store.neighbors(user, ["caroline"])
        assert await graph_store.aneighbors(user, ["caroline"]) == sync
        await graph_store.aremove(user, ["b"])
        assert [h.memory_id for h in await asyncio.to_thread(graph_store.neighbors, user, ["caroline"])] == [
            "a"
        ]

    # -- scope ----------------------------------------------------------------------------

    def test_users_never_see_each_other(self, graph_store: GraphStore, users: tuple[str, str]) -> None:
        alice, bob = users
        graph_store.upsert(alice, [item("a1", "Caroline", "Rex"), item("a2", "Rex", "Paris", minutes=1)])
        graph_store.upsert(bob, [item("b1", "Caroline", "Rex"), item("b2", "Rex", "Tokyo", minutes=1)])
        for me, mine in ((alice, {"a1", "a2"}), (bob, {"b1", "b2"})):
            assert {h.memory_id for h in graph_store.neighbors(me, ["caroline"], hops=2)} == mine
            assert set(graph_store.entities_of(me, ["a1", "a2", "b1", "b2"])) == mine
            assert graph_store.entity_stats(me, ["rex"]) == (2, {"rex": 2})
        assert graph_store.entity_keys(alice, ["tokyo", "paris"]) == {"paris"}
        graph_store.remove(bob, ["a1"])  # another user's id: nothing happens
        assert graph_store.stats(alice).memories == 2
        graph_store.clear(bob)
        assert graph_store.stats(bob).empty
        assert graph_store.stats(alice) == GraphStats(memories=2, entities=3, mentions=4)

    def test_same_memory_id_in_two_users(self, graph_store: GraphStore, users: tuple[str, str]) -> None:
        alice, bob = users
        graph_store.upsert(alice, [item("shared-id", "Rex")])
        graph_store.upsert(bob, [item("shared-id", "Tokyo")])
        assert graph_store.entities_of(alice, ["shared-id"])["shared-id"] == (ent("Rex"),)
        assert graph_store.entities_of(bob, ["shared-id"])["shared-id"] == (ent("Tokyo"),)
        graph_store.remove(alice, ["shared-id"])
        assert graph_store.stats(bob).memories == 1

    # -- deletes, supersedes, idempotence -----------------------------------------------------

    def test_remove_is_reflected_in_traversal(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [item("a", "Caroline", "Rex"), item("b", "Rex", "Beach", minutes=1)])
        graph_store.remove(user, ["b", "never-existed"])
        assert [h.memory_id for h in graph_store.neighbors(user, ["caroline"])] == ["a"]
        assert graph_store.entity_keys(user, ["beach", "rex"]) == {"rex"}  # orphan gone
        assert graph_store.entity_stats(user, ["rex"]) == (1, {"rex": 1})

    def test_rewrite_replaces_edges(self, graph_store: GraphStore, user: str) -> None:
        """A superseding write of a memory drops the edges it no longer has."""
        graph_store.upsert(user, [item("pref", "Excel", "Reports")])
        graph_store.upsert(user, [item("pref", "CSV", "Reports", minutes=5)])
        assert graph_store.neighbors(user, ["excel"]) == []
        assert [h.memory_id for h in graph_store.neighbors(user, ["csv"])] == ["pref"]
        assert graph_store.stats(user) == GraphStats(memories=1, entities=2, mentions=2)

    def test_rewrites_are_idempotent(self, graph_store: GraphStore, user: str) -> None:
        rel = (GraphRelation("caroline", "owns", "rex"),)
        batch = [item("a", "Caroline", "Rex", relations=rel), item("b", "Rex", "Beach", minutes=1)]
        graph_store.upsert(user, batch)
        first = (graph_store.stats(user), graph_store.neighbors(user, ["caroline"]))
        graph_store.upsert(user, batch)
        graph_store.upsert(user, batch + batch)  # duplicates inside one batch too
        assert (graph_store.stats(user), graph_store.neighbors(user, ["caroline"])) == first
        assert graph_store.entity_stats(user, [])[0] == 2  # the memory count the weights use
        graph_store.remove(user, ["b"])
        graph_store.remove(user, ["b"])
        assert graph_store.stats(user).memories == 1
        assert graph_store.entity_stats(user, [])[0] == 1

    def test_empty_again_after_cleanup(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [item(f"m{i}", "Rex", f"E{i}", minutes=i) for i in range(10)])
        graph_store.remove(user, [f"m{i}" for i in range(5)])
        assert graph_store.entity_stats(user, [])[0] == 5
        graph_store.clear(user)
        assert graph_store.stats(user).empty
        assert graph_store.entity_stats(user, ["rex"]) == (0, {})
        assert graph_store.neighbors(user, ["rex"]) == []
        graph_store.upsert(user, [item("m0", "Rex")])
        graph_store.remove(user, ["m0"])
        assert graph_store.stats(user).empty

    def test_large_batches(self, graph_store: GraphStore, user: str) -> None:
        graph_store.upsert(user, [item(f"m{i}", f"E{i % 300}", "Common", minutes=i) for i in range(2500)])
        assert graph_store.stats(user) == GraphStats(memories=2500, entities=301, mentions=5000)
        graph_store.remove(user, [f"m{i}" for i in range(2500)])
        assert graph_store.stats(user).empty

    # -- names as plain data ---------------------------------------------------------------

    def test_unicode_and_chinese_names(self, graph_store: GraphStore, user: str) -> None:
        names = ["张伟", "北京", "Zoë Ångström", "Ægir", "🐕 Rex", "München"]
        graph_store.upsert(user, [item(f"m{i}", n, "共同", minutes=i) for i, n in enumerate(names)])
        for i, name in enumerate(names):
            key = normalize_entity(name)
            assert [h.memory_id for h in graph_store.neighbors(user, [key], hops=1)] == [f"m{i}"]
            assert name in [e.name for e in graph_store.entities_of(user, [f"m{i}"])[f"m{i}"]]
        hits = graph_store.neighbors(user, ["张伟"], hops=2)
        assert hits[0].memory_id == "m0" and len(hits) == len(names)

    @pytest.mark.parametrize("name", HOSTILE_NAMES, ids=lambda n: n[:24])
    def test_hostile_names_are_plain_data(
        self, graph_store: GraphStore, users: tuple[str, str], name: str
    ) -> None:
        alice, bob = users
        graph_store.upsert(bob, [item("canary", "Canary")])
        graph_store.upsert(alice, [item(name, name, "Rex"), item("other", "Rex", minutes=1)])
        key = normalize_entity(name)
        assert [h.memory_id for h in graph_store.neighbors(alice, [key], hops=1)] == [name]
        assert graph_store.entities_of(alice, [name])[name] == tuple(
            sorted([ent(name), ent("Rex")], key=lambda e: e.key)
        )
        assert graph_store.entity_keys(alice, [key]) == {key}
        assert graph_store.stats(alice) == GraphStats(memories=2, entities=2, mentions=3)
        assert graph_store.stats(bob) == GraphStats(memories=1, entities=1, mentions=1)
        graph_store.remove(alice, [name])
        assert graph_store.entity_keys(alice, [key]) == set()
        assert graph_store.stats(bob).memories == 1
