"""DreamMemStore side by side with LangGraph's InMemoryStore (the reference).

The same scenario runs against both stores; their answers must agree. Both stores
embed with the same bag-of-words hashing embedder, so a query's top-1 on
unambiguous data is comparable (the scores are not: DreamMem's is a recall score).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, Item, PutOp, SearchItem
from langgraph.store.memory import InMemoryStore

from dreammem import DreamMemory, ScopeError, Status, ValidationError
from dreammem.embed import HashingEmbedder
from langchain_dreammem import DreamMemStore


class HashingEmbeddings(Embeddings):
    """The same hashing embedder behind LangChain's Embeddings interface."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return list(map(float, self.inner.embed_query(text)))


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[BaseStore, DreamMemStore]]:
    reference = InMemoryStore(index={"dims": 256, "embed": HashingEmbeddings(), "fields": ["text"]})
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        yield reference, DreamMemStore(memory, fields=["text"])


def _norm(result: Any, *, top1: bool = False) -> Any:
    if result is None:
        return None
    if isinstance(result, SearchItem):
        return (result.namespace, result.key, result.value, result.score is None)
    if isinstance(result, Item):
        return (result.namespace, result.key, result.value)
    if isinstance(result, list):
        items = [_norm(r) for r in result]
        return items[:1] if top1 else items
    return result


U = "u1"
SEED: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    ((U, "prefs"), "drink", {"text": "likes green tea", "n": 3, "tags": ["a", "b"], "meta": {"lvl": 1}}),
    ((U, "prefs"), "food", {"text": "vegetarian cooking", "n": 7, "tags": ["b"], "meta": {"lvl": 2}}),
    ((U, "facts"), "city", {"text": "lives in Oslo", "n": 10, "tags": [], "meta": {"lvl": 2}}),
    ((U, "prefs", "travel"), "seat", {"text": "window seat on long flights", "n": 5, "meta": {"lvl": 3}}),
    (("u2", "prefs"), "drink", {"text": "likes black coffee", "n": 1}),
]

# (name, op, args, kwargs, compare only the top-1)
SCENARIOS: list[tuple[str, str, tuple[Any, ...], dict[str, Any], bool]] = [
    ("get", "get", ((U, "prefs"), "drink"), {}, False),
    ("get-missing", "get", ((U, "prefs"), "nope"), {}, False),
    ("get-other-user-ns", "get", (("u2", "prefs"), "food"), {}, False),
    ("search-prefix", "search", ((U,),), {}, False),
    ("search-prefix-2", "search", ((U, "prefs"),), {}, False),
    ("search-exact-ns", "search", ((U, "prefs", "travel"),), {}, False),
    ("search-no-match", "search", ((U, "zzz"),), {}, False),
    ("search-limit", "search", ((U,),), {"limit": 2}, False),
    ("search-offset", "search", ((U,),), {"offset": 1, "limit": 2}, False),
    ("search-offset-past-end", "search", ((U,),), {"offset": 10}, False),
    ("filter-eq-plain", "search", ((U,),), {"filter": {"n": 7}}, False),
    ("filter-nested", "search", ((U,),), {"filter": {"meta": {"lvl": 2}}}, False),
    ("filter-list", "search", ((U,),), {"filter": {"tags": ["a", "b"]}}, False),
    ("filter-$eq", "search", ((U,),), {"filter": {"n": {"$eq": 3}}}, False),
    ("filter-$ne", "search", ((U,),), {"filter": {"n": {"$ne": 3}}}, False),
    ("filter-$gt", "search", ((U,),), {"filter": {"n": {"$gt": 5}}}, False),
    ("filter-$gte", "search", ((U,),), {"filter": {"n": {"$gte": 5}}}, False),
    ("filter-$lt", "search", ((U,),), {"filter": {"n": {"$lt": 5}}}, False),
    ("filter-$lte", "search", ((U,),), {"filter": {"n": {"$lte": 5}}}, False),
    ("filter-range", "search", ((U,),), {"filter": {"n": {"$gt": 2, "$lt": 8}}}, False),
    ("filter-two-keys", "search", ((U,),), {"filter": {"n": {"$gte": 3}, "meta": {"lvl": 2}}}, False),
    ("query-top1-tea", "search", ((U,),), {"query": "green tea"}, True),
    ("query-top1-oslo", "search", ((U,),), {"query": "Oslo"}, True),
    ("query-top1-window", "search", ((U, "prefs"),), {"query": "window seat"}, True),
    ("query-with-filter", "search", ((U,),), {"query": "vegetarian", "filter": {"n": {"$gt": 5}}}, True),
    ("list-all", "list_namespaces", (), {}, False),
    ("list-prefix", "list_namespaces", (), {"prefix": (U,)}, False),
    ("list-prefix-wildcard", "list_namespaces", (), {"prefix": ("*", "prefs")}, False),
    ("list-suffix", "list_namespaces", (), {"suffix": ("prefs",)}, False),
    ("list-suffix-wildcard", "list_namespaces", (), {"suffix": ("prefs", "*")}, False),
    ("list-prefix-and-suffix", "list_namespaces", (), {"prefix": (U,), "suffix": ("facts",)}, False),
    ("list-max-depth", "list_namespaces", (), {"max_depth": 2}, False),
    ("list-max-depth-1", "list_namespaces", (), {"max_depth": 1}, False),
    ("list-limit-offset", "list_namespaces", (), {"limit": 2, "offset": 1}, False),
]


def _seed(store: BaseStore) -> None:
    for namespace, key, value in SEED:
        store.put(namespace, key, value)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize(("name", "op", "args", "kwargs", "top1"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_same_answers_as_in_memory_store(
    stores: tuple[BaseStore, DreamMemStore],
    mode: str,
    name: str,
    op: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    top1: bool,
) -> None:
    answers = []
    for store in stores:
        _seed(store)
        if mode == "sync":
            result = getattr(store, op)(*args, **kwargs)
        else:
            result = asyncio.run(getattr(store, "a" + op)(*args, **kwargs))
        answers.append(_norm(result, top1=top1))
    assert answers[0] == answers[1]
    if op == "search" and not kwargs.get("offset") and name != "search-no-match":
        assert answers[1], "a scenario that finds nothing proves nothing"


def _both(stores: tuple[BaseStore, DreamMemStore], call: str, *args: Any, **kwargs: Any) -> list[Any]:
    return [_norm(getattr(s, call)(*args, **kwargs)) for s in stores]


def test_put_update_delete_sequence(stores: tuple[BaseStore, DreamMemStore]) -> None:
    ns = (U, "prefs")
    for store in stores:
        store.put(ns, "a", {"text": "first"})
        store.put(ns, "b", {"text": "second"})
        store.put(ns, "a", {"text": "first, updated"})
        store.delete(ns, "b")
        store.delete(ns, "never-existed")  # no error
        store.put(ns, "b", {"text": "second again"})
    for call, args in (("get", (ns, "a")), ("get", (ns, "b")), ("search", (ns,))):
        ref, ours = _both(stores, call, *args)
        assert ref == ours
    assert _both(stores, "list_namespaces") == [[ns], [ns]]
    for store in stores:
        store.delete(ns, "a")
        store.delete(ns, "b")
    ref, ours = _both(stores, "search", ns)
    assert ref == ours == []
    assert _norm(stores[1].list_namespaces()) == []  # empty again


def test_index_false_items_come_unscored(stores: tuple[BaseStore, DreamMemStore]) -> None:
    for store in stores:
        store.put((U,), "scored", {"text": "peanut allergy"})
        store.put((U,), "raw", {"text": "peanut blob"}, index=False)
    ref, ours = _both(stores, "search", (U,), query="peanut")
    assert ref == ours
    assert ours[0][1] == "scored" and ours[0][3] is False
    assert ours[1] == ((U,), "raw", {"text": "peanut blob"}, True)


def test_batch_reads_see_state_before_its_puts(stores: tuple[BaseStore, DreamMemStore]) -> None:
    results = []
    for store in stores:
        ops = [PutOp((U,), "k", {"text": "v1"}), GetOp((U,), "k"), PutOp((U,), "k", {"text": "v2"})]
        results.append([_norm(r) for r in store.batch(ops)] + [_norm(store.get((U,), "k"))])
    assert results[0] == results[1] == [None, None, None, ((U,), "k", {"text": "v2"})]


@pytest.mark.parametrize(
    ("call", "args"),
    [
        ("put", ((), "k", {"text": "x"})),
        ("put", (("langgraph", U), "k", {"text": "x"})),
        ("put", ((U, "a.b"), "k", {"text": "x"})),
        ("put", ((U, ""), "k", {"text": "x"})),
        ("put", ((U, 3), "k", {"text": "x"})),
        ("put", ((U, "a\x00"), "k", {"text": "x"})),
        ("search", ((U, "a.b"),)),
        ("list_namespaces", ()),
    ],
    ids=["empty", "root-langgraph", "period", "empty-label", "non-str", "nul", "search-period", "list-ok"],
)
def test_namespace_validation_matches(
    stores: tuple[BaseStore, DreamMemStore], call: str, args: tuple[Any, ...]
) -> None:
    outcomes = []
    for store in stores:
        try:
            outcomes.append(("ok", _norm(getattr(store, call)(*args))))
        except InvalidNamespaceError:
            outcomes.append(("invalid", None))
    assert outcomes[0] == outcomes[1]
    if call == "put":
        assert outcomes[0][0] == "invalid"


def test_direct_batch_validates_labels(stores: tuple[BaseStore, DreamMemStore]) -> None:
    with pytest.raises(InvalidNamespaceError):
        stores[1].batch([PutOp((U, "a.b"), "k", {"text": "x"})])


def test_user_id_is_part_of_every_namespace(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        store = DreamMemStore(memory, user_index=1)
        store.put(("memories", "alice"), "k", {"text": "alice likes tea"})
        store.put(("memories", "bob"), "k", {"text": "bob likes coffee"})
        assert [i.value for i in store.search(("memories", "alice"))] == [{"text": "alice likes tea"}]
        for call in (lambda: store.search(("memories",)), lambda: store.put(("memories",), "k", {"a": 1})):
            with pytest.raises(ScopeError):
                call()
        with pytest.raises(ScopeError):
            store.get(("memories",), "k")
        # The item is ordinary DreamMem memory of that user, and nobody else's.
        assert [h.record.content for h in memory.recall("tea", user_id="alice")] == ["alice likes tea"]
        assert all("alice" not in h.record.content for h in memory.recall("tea", user_id="bob"))
    with pytest.raises(ValueError):
        DreamMemStore(memory, user_index=-1)


def test_update_supersedes_and_keeps_history(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        store = DreamMemStore(memory)
        store.put((U, "prefs"), "drink", {"text": "likes tea"})
        first = store.get((U, "prefs"), "drink")
        store.put((U, "prefs"), "drink", {"text": "likes coffee"})
        item = store.get((U, "prefs"), "drink")
        assert first is not None and item is not None and item.value == {"text": "likes coffee"}
        assert item.created_at == first.created_at and item.updated_at > first.updated_at
        superseded = memory.get_all(user_id=U, status="superseded")
        assert [r.content for r in superseded] == ["likes tea"]
        assert superseded[0].system["keyed"]["key"] == "drink"
        store.delete((U, "prefs"), "drink")
        statuses = [r.status for r in memory.get_all(user_id=U, status=None)]
        assert statuses == [Status.DELETED, Status.SUPERSEDED]


def test_default_text_and_reopen(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        store = DreamMemStore(memory)
        store.put((U,), "one", {"text": "plain text"})
        store.put((U,), "two", {"city": "Oslo", "n": 4, "ok": True, "tags": ["x"]})
        store.put((U,), "three", {"flag": True})
        texts = {r.system["keyed"]["key"]: r.content for r in memory.get_all(user_id=U)}
        assert texts == {"one": "plain text", "two": "city: Oslo\nn: 4\ntags: x", "three": '{"flag": true}'}
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as reopened:
        store = DreamMemStore(reopened)
        item = store.get((U,), "two")
        assert item is not None and item.value["city"] == "Oslo"
        assert store.search((U,), query="Oslo")[0].key == "two"


def test_bad_values_raise_and_write_nothing(stores: tuple[BaseStore, DreamMemStore]) -> None:
    ours = stores[1]
    with pytest.raises(ValidationError):
        ours.put((U,), "k", {"when": object()})
    with pytest.raises(ValueError, match="operator"):
        ours.put((U,), "ok", {"n": 1}) or ours.search((U,), filter={"n": {"$regex": "x"}})
    assert ours.get((U,), "k") is None
    with pytest.raises(NotImplementedError):
        ours.put((U,), "k", {"a": 1}, ttl=5)
    with pytest.raises(ValidationError):  # one bad value: the whole batch writes nothing
        ours.batch([PutOp((U,), "good", {"text": "fine"}), PutOp((U,), "bad", {"x": object()})])
    with pytest.raises(ScopeError):
        ours.batch([PutOp((U,), "good", {"text": "fine"}), PutOp((), "bad", {"text": "x"})])
    assert ours.get((U,), "good") is None
