"""TemporalPath.prepare: the window reads made beside the encoder, found again by search."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.recall.base import RecallQuery, SearchMemo
from dreammem.recall.temporal import TemporalPath

NOW = datetime(2023, 10, 20, 14, 0, tzinfo=UTC)
DAY = timedelta(days=1)


@pytest.fixture
def diary(memory: DreamMemory) -> DreamMemory:
    """Memories in May and October, one said in June about May ("last month")."""
    memory.add_many(
        [
            {"content": text, "user_id": "u1", "event_time": when, "session_id": f"s{n}"}
            for n, (when, text) in enumerate(
                [
                    (datetime(2023, 5, 7, 18, tzinfo=UTC), "Dinner with Ana at the Thai place"),
                    (datetime(2023, 5, 20, 9, tzinfo=UTC), "Went hiking in the Alps with Ana"),
                    (datetime(2023, 6, 3, 9, tzinfo=UTC), "Ana and I went to the Thai place last month"),
                    (NOW - 8 * DAY, "Had sushi with Ana for lunch"),
                    (NOW - DAY, "Dinner with Tom at the Thai place"),
                ]
            )
        ]
    )
    return memory


def _counted(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The store reads made from now on, by method name."""
    calls: list[str] = []
    for name in ("window_rowids", "keyword_search", "pointing_times"):
        method: Callable[..., Any] = getattr(store, name)

        def counted(*args: Any, _name: str = name, _method: Callable[..., Any] = method, **kw: Any) -> Any:
            calls.append(_name)
            return _method(*args, **kw)

        monkeypatch.setattr(store, name, counted)
    return calls


def _query(memory: DreamMemory, text: str) -> RecallQuery:
    vector = memory.embedder.embed_query(text)
    return RecallQuery(text=text, user_id="u1", limit=30, now=NOW, embedding=vector, searches=SearchMemo())


@pytest.mark.parametrize(
    "text", ["Thai place in May 2023", "what did Ana do in May 2023?", "dinner last week"]
)
def test_prepare_then_search_gives_searchs_candidates_reading_the_window_once(
    diary: DreamMemory, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    path = TemporalPath(diary.store, diary.vector_index, diary.embedder)
    alone = path.search(_query(diary, text))
    calls = _counted(diary.store, monkeypatch)
    query = _query(diary, text)
    path.prepare(dataclasses.replace(query, embedding=None))  # beside the encoder: no embedding yet
    read = list(calls)
    assert path.search(query) == alone
    assert alone and read and "window_rowids" in read
    assert calls == read  # search found every window read held


def test_prepare_reads_nothing_for_an_anchor_or_a_query_without_a_window(
    diary: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = TemporalPath(diary.store, diary.vector_index, diary.embedder)
    calls = _counted(diary.store, monkeypatch)
    for text in (
        "what did we do before the hiking trip?",
        "where is the Thai place?",
        "when did Ana go hiking?",
    ):
        path.prepare(_query(diary, text))
    assert calls == []
