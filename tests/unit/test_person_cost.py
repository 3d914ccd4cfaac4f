"""The person and unnamed paths share one embedding and one index search (real MiniLM)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from dreammem import DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import NumpyBertEmbedder
from dreammem.recall.base import Candidate, RecallPath, RecallQuery, SearchMemo
from dreammem.recall.person import without_names
from dreammem.recall.vector import nearest
from dreammem.types import MemoryRecord
from tests.transcripts import said_by

T0 = datetime(2025, 6, 1, 18, 0, tzinfo=UTC)
LINES = [
    "Oskar: Priya, Priya, how are you doing today, Priya?",
    "Priya: We took the twins to the aquarium and they adored the jellyfish.",
    "Oskar: Thanks Priya! My dog adored the beach.",
    "Priya: Saturday I baked bread for the neighbours.",
    "Oskar: Priya, the twins must be big now!",
    "Priya: My sister flew in from Lisbon for the weekend.",
    "Oskar: I painted the fence blue on Sunday.",
]
NAMED = "What did Priya's twins adore?"
PLAIN = "What did the twins adore?"
BOTH = ("person", "unnamed")


class CountingEmbedder:
    """The real embedder, with every query text it was asked to embed recorded."""

    def __init__(self, inner: NumpyBertEmbedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.queries: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.queries.append(text)
        return self.inner.embed_query(text)


class Alone:
    """A path run with a memo of its own: what it costs when nothing is shared."""

    def __init__(self, inner: RecallPath) -> None:
        self.name = inner.name
        self.inner = inner

    def search(self, query: RecallQuery) -> list[Candidate]:
        return self.inner.search(dataclasses.replace(query, searches=SearchMemo()))


@pytest.fixture
def memory(minilm: NumpyBertEmbedder, monkeypatch: pytest.MonkeyPatch) -> Iterator[DreamMemory]:
    """A transcript store on MiniLM whose index counts its searches (``memory.searched``)."""
    with DreamMemory(None, embedder=CountingEmbedder(minilm)) as m:
        at = [T0 + timedelta(minutes=i) for i in range(len(LINES))]
        m.add_many(
            [
                {
                    "content": line,
                    "user_id": "u1",
                    "session_id": "s1",
                    "speaker": said_by(line),
                    "event_time": when,
                }
                for line, when in zip(LINES, at, strict=True)
            ]
        )
        searched: list[int] = []
        index = m.vector_index

        def counted(real: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                searched.append(1)
                return real(*args)

            return call

        monkeypatch.setattr(index, "search", counted(index.search))
        monkeypatch.setattr(index, "search_subset", counted(index.search_subset))
        m.searched = searched  # type: ignore[attr-defined]
        yield m


def _cost(memory: DreamMemory, text: str, paths: Sequence[str]) -> tuple[int, int, list[str]]:
    """Query embeddings and index searches of one recall, and the texts embedded."""
    embedder = memory.embedder
    assert isinstance(embedder, CountingEmbedder)
    searched: list[int] = memory.searched  # type: ignore[attr-defined]
    embedder.queries.clear()
    searched.clear()
    memory.recall(text, user_id="u1", k=5, now=T0 + timedelta(days=1), paths=list(paths))
    return len(embedder.queries), len(searched), list(embedder.queries)


def test_both_paths_are_on_by_default_and_the_person_path_weighs_half() -> None:
    config = RecallConfig()
    assert set(BOTH) <= set(config.active_paths)
    assert config.weight("person") == 0.5


def test_a_question_naming_a_speaker_costs_one_embedding_and_one_search_more(memory: DreamMemory) -> None:
    shipped = RecallConfig().active_paths
    without = [p for p in shipped if p not in BOTH]
    base = _cost(memory, NAMED, without)
    both = _cost(memory, NAMED, shipped)
    assert both[:2] == (base[0] + 1, base[1] + 1)
    assert both[2][-1] == without_names(NAMED, ["priya"]) == "What did twins adore?"
    # Either path alone pays the same one embedding and search: the other rides on it.
    for name in BOTH:
        alone = _cost(memory, NAMED, [p for p in shipped if p != name])
        assert alone[:2] == both[:2]
    # A question naming no one costs nothing more.
    assert _cost(memory, PLAIN, shipped)[:2] == _cost(memory, PLAIN, without)[:2]


def test_sharing_changes_no_hit_and_unshared_it_costs_two(memory: DreamMemory) -> None:
    def run() -> list[tuple[str, float, tuple[str, ...]]]:
        result = memory.recall(NAMED, user_id="u1", k=5, now=T0 + timedelta(days=1))
        return [(h.record.id, h.score, h.paths) for h in result.hits]

    shipped = RecallConfig().active_paths
    shared = run()
    assert any("person" in paths for _, _, paths in shared)
    assert any("unnamed" in paths for _, _, paths in shared)
    cost = _cost(memory, NAMED, shipped)
    pipeline = memory.pipeline
    pipeline.paths = {**pipeline.paths, **{name: Alone(pipeline.paths[name]) for name in BOTH}}
    assert run() == shared
    assert _cost(memory, NAMED, shipped)[:2] == (cost[0] + 1, cost[1] + 1)


def test_the_unnamed_path_answers_as_its_own_shallow_search_would(memory: DreamMemory) -> None:
    pipeline = memory.pipeline
    assert pipeline.embedder is not None
    query = RecallQuery(NAMED, "u1", 3, T0 + timedelta(days=1))
    query = dataclasses.replace(query, earlier={"keyword": pipeline.paths["keyword"].search(query)})
    found = pipeline.paths["unnamed"].search(query)
    own = nearest(memory.vector_index, query, pipeline.embedder.embed_query("What did twins adore?"))
    assert len(found) == 3 and found == own


def test_a_held_search_answers_shallower_asks_and_a_deeper_one_searches_again() -> None:
    calls: list[int] = []

    def search(depth: int) -> list[Candidate]:
        calls.append(depth)
        return [Candidate(i, 1.0 - i / 100) for i in range(min(depth, 5))]

    memo = SearchMemo()
    assert [c.rowid for c in memo.nearest("a", 3, search)] == [0, 1, 2]
    assert [c.rowid for c in memo.nearest("a", 2, search)] == [0, 1]
    assert calls == [3]
    assert len(memo.nearest("a", 4, search)) == 4 and calls == [3, 4]
    assert len(memo.nearest("a", 9, search)) == 5 and calls == [3, 4, 9]
    assert len(memo.nearest("a", 50, search)) == 5 and calls == [3, 4, 9]  # 9 found 5: all there are
    assert len(memo.nearest("b", 2, search)) == 2 and calls == [3, 4, 9, 2]


class _Texts:
    """A text source holding some rows' texts, recording the row ids each read asks for."""

    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts
        self.asked: list[list[int]] = []

    def active_texts(self, user_id: str, rowids: Sequence[int]) -> dict[int, str]:
        self.asked.append(list(rowids))
        return {r: self.texts[r] for r in rowids if r in self.texts}


def test_a_recall_reads_each_rows_text_once_rows_without_one_included() -> None:
    source = _Texts({1: "a", 2: "b", 3: "c"})
    memo = SearchMemo()
    assert memo.active_texts(source, "u1", [2, 1, 9]) == {2: "b", 1: "a"}
    assert memo.active_texts(source, "u1", [9, 3, 2, 3]) == {3: "c", 2: "b"}
    assert memo.active_texts(source, "u1", [1, 9]) == {1: "a"}
    assert source.asked == [[2, 1, 9], [3]]  # 9 (inactive or another user's) is not asked again


def test_the_paths_of_one_recall_read_a_rows_record_at_most_once(
    memory: DreamMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = memory.store
    asked: list[int] = []

    def counted(user_id: str, rowids: Sequence[int]) -> dict[int, MemoryRecord]:
        asked.extend(rowids)
        return type(store).get_by_rowids(store, user_id, rowids)

    monkeypatch.setattr(store, "get_by_rowids", counted)
    hits = memory.recall(NAMED, user_id="u1", k=3, now=T0 + timedelta(days=1)).hits
    assert hits and asked
    assert len(asked) == len(set(asked))


def test_a_value_worked_out_once_per_recall_is_held_by_its_key() -> None:
    memo = SearchMemo()
    calls: list[str] = []
    assert memo.once("a", lambda: calls.append("a") or 1) == 1
    assert memo.once("a", lambda: calls.append("a again") or 2) == 1
    assert memo.once("b", lambda: calls.append("b") or 3) == 3
    assert calls == ["a", "b"]
