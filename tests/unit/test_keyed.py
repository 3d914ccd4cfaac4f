from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemory, ScopeError, Status, ValidationError
from dreammem.config import DreamConfig, DreamMemConfig
from dreammem.embed import HashingEmbedder
from dreammem.keyed import delete_keyed, get_keyed, keyed_paths, list_keyed, put_keyed, rank_keyed
from dreammem.types import utcnow


def _put(memory: DreamMemory, user: str, path: tuple[str, ...], key: str, text: str, **kw: object) -> None:
    put_keyed(memory, user_id=user, path=path, key=key, value={"text": text}, text=text, **kw)  # type: ignore[arg-type]


def test_put_get_supersedes_and_keeps_history(memory: DreamMemory) -> None:
    _put(memory, "u1", ("u1", "prefs"), "drink", "likes green tea")
    first = get_keyed(memory, user_id="u1", path=("u1", "prefs"), key="drink")
    assert first is not None and first.value == {"text": "likes green tea"}
    _put(memory, "u1", ("u1", "prefs"), "drink", "likes black coffee")
    current = get_keyed(memory, user_id="u1", path=("u1", "prefs"), key="drink")
    assert current is not None and current.value == {"text": "likes black coffee"}
    assert current.created_at == first.created_at and current.updated_at > first.updated_at
    history = memory.history(current.record.id, user_id="u1")
    assert [r.status for r in history] == [Status.SUPERSEDED, Status.ACTIVE]
    assert history[0].superseded_by == current.record.id
    assert get_keyed(memory, user_id="u2", path=("u1", "prefs"), key="drink") is None


def test_delete_and_listing_order(memory: DreamMemory) -> None:
    _put(memory, "u1", ("u1", "a"), "k1", "one")
    _put(memory, "u1", ("u1", "b"), "k1", "two")
    _put(memory, "u1", ("u1", "a"), "k2", "three")
    _put(memory, "u1", ("u1", "a", "deep"), "k1", "four")
    _put(memory, "u1", ("u1", "ab"), "k1", "not under a")
    under_a = list_keyed(memory, user_id="u1", prefix=("u1", "a"))
    assert [(e.path, e.key) for e in under_a] == [
        (("u1", "a"), "k1"),
        (("u1", "a"), "k2"),
        (("u1", "a", "deep"), "k1"),
    ]
    assert len(list_keyed(memory, user_id="u1")) == 5
    assert delete_keyed(memory, user_id="u1", path=("u1", "a"), key="k1")
    assert not delete_keyed(memory, user_id="u1", path=("u1", "a"), key="k1")
    assert get_keyed(memory, user_id="u1", path=("u1", "a"), key="k1") is None
    assert keyed_paths(memory) == [("u1", "a"), ("u1", "a", "deep"), ("u1", "ab"), ("u1", "b")]


def test_rank_keyed_orders_by_recall_and_appends_unindexed(memory: DreamMemory) -> None:
    _put(memory, "u1", ("u1",), "a", "the user plays chess on weekends")
    _put(memory, "u1", ("u1",), "b", "the user is allergic to peanuts")
    _put(memory, "u1", ("u1",), "c", "peanuts blob", indexed=False)
    entries = list_keyed(memory, user_id="u1")
    ranked = rank_keyed(memory, "peanuts allergy", user_id="u1", entries=entries)
    assert ranked[0][0].key == "b" and ranked[0][1] is not None
    assert ranked[-1][0].key == "c" and ranked[-1][1] is None
    assert rank_keyed(memory, "x", user_id="u1", entries=[]) == []


def test_bad_input_is_typed(memory: DreamMemory) -> None:
    with pytest.raises(ValidationError):
        _put(memory, "u1", ("u1", ""), "k", "x")
    with pytest.raises(ValidationError):
        _put(memory, "u1", ("u1",), "", "x")
    with pytest.raises(ValidationError):
        put_keyed(memory, user_id="u1", path=("u1",), key="k", value={"d": object()}, text="x")
    with pytest.raises(ValidationError):
        put_keyed(memory, user_id="u1", path=("u1",), key="k", value=[1], text="x")  # type: ignore[arg-type]
    with pytest.raises(ScopeError):
        _put(memory, "", ("u1",), "k", "x")
    assert list_keyed(memory, user_id="u1") == []


def test_rank_keyed_depth_bounds_recall_and_keeps_every_entry(memory: DreamMemory) -> None:
    memory.add_many([{"content": f"tea note {i}", "user_id": "u1"} for i in range(40)])
    _put(memory, "u1", ("u1",), "a", "green tea with jasmine")
    _put(memory, "u1", ("u1",), "b", "coffee beans")
    entries = list_keyed(memory, user_id="u1")
    ranked = rank_keyed(memory, "jasmine tea", user_id="u1", entries=entries, depth=1)
    assert ranked[0][0].key == "a" and ranked[0][1] is not None
    assert sorted(e.key for e, _ in ranked) == ["a", "b"]  # nothing is lost below the cut


def test_second_level_dream_neither_merges_nor_archives_keyed_values(tmp_path: Path) -> None:
    config = DreamMemConfig(dream=DreamConfig(low_importance=5, unused_days=1))
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder(), config=config) as memory:
        _put(memory, "u1", ("u1", "a"), "k", "likes green tea")
        _put(memory, "u1", ("u1", "b"), "k", "likes green tea")  # the same text under two keys
        plain = memory.remember("likes green tea", user_id="u1", pinned=False)
        other = memory.remember("likes jazz", user_id="u1", pinned=False)
        memory.dream(user_id="u1", level=2, now=utcnow() + timedelta(days=30))
        for path in (("u1", "a"), ("u1", "b")):
            entry = get_keyed(memory, user_id="u1", path=path, key="k")
            assert entry is not None and entry.record.is_active, path
        # The same dream did archive the plain, long-unused facts: the exemption is what kept the keys.
        assert memory.get(other.id, user_id="u1").status is Status.ARCHIVED
        assert memory.get(plain.id, user_id="u1").status is Status.ARCHIVED
