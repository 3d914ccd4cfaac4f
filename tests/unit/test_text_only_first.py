"""Paths that read only the query's text run before the query is embedded, with the same results."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import Candidate, RecallPath, RecallQuery, text_only
from dreammem.recall.pipeline import RecallPipeline

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


class Log:
    """What ran, in order, and what each path saw."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.saw: dict[str, tuple[bool, list[str]]] = {}


class LoggedEmbedder(HashingEmbedder):
    def __init__(self, log: Log) -> None:
        super().__init__()
        self.log = log

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.log.order.append("embed")
        return super().embed_query(text)


class LoggedPath:
    """Fixed candidates; notes when it ran, whether it had the embedding and the earlier paths."""

    def __init__(
        self, name: str, rowids: Sequence[int], log: Log, *, text: bool = False, fails: bool = False
    ):
        self.name = name
        self.text_only = text
        self._rowids = list(rowids)
        self._log = log
        self._fails = fails

    def search(self, query: RecallQuery) -> list[Candidate]:
        self._log.order.append(self.name)
        self._log.saw[self.name] = (query.embedding is not None, list(query.earlier))
        if self._fails:
            raise ConnectionError("server went away")
        return [Candidate(r, 1.0 / (n + 1)) for n, r in enumerate(self._rowids)]


class Plain:
    """The same path without its ``text_only`` mark: runs in the configured order."""

    def __init__(self, inner: RecallPath) -> None:
        self.name = inner.name
        self._inner = inner

    def search(self, query: RecallQuery) -> list[Candidate]:
        return self._inner.search(query)


def _memory(tmp_path, embedder: HashingEmbedder | None = None) -> DreamMemory:  # type: ignore[no-untyped-def]
    memory = DreamMemory(tmp_path / "m", embedder=embedder or HashingEmbedder(), config=DreamMemConfig())
    for n, text in enumerate(
        [
            "Ana bought the bike in Lisbon.",
            "Tom fixed the printer in Berlin last week.",
            "Ana sold the bike to Tom yesterday.",
            "Mia booked a kayak for May 2024.",
            "The printer in Berlin broke again.",
            "Tom and Mia went to Oslo in March.",
        ]
    ):
        memory.add(text, user_id="u1", session_id=f"s{n // 3}", event_time=NOW - timedelta(days=40 - n))
    return memory


def _pipeline(memory: DreamMemory, paths: Sequence[RecallPath], embedder: HashingEmbedder) -> RecallPipeline:
    names = tuple(p.name for p in paths)
    return RecallPipeline(
        memory.store, {p.name: p for p in paths}, RecallConfig(paths=names), embedder=embedder
    )


def _query(text: str) -> RecallQuery:
    return RecallQuery(text=text, user_id="u1", limit=30, now=NOW)


def test_text_only_paths_run_before_the_embedding_and_the_others_see_the_paths_before_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = Log()
    embedder = LoggedEmbedder(log)
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        paths = [
            LoggedPath("vector", rowids[:3], log),
            LoggedPath("words", rowids[2:5], log, text=True),
            LoggedPath("votes", rowids[1:4], log),
            LoggedPath("names", rowids[4:], log, text=True),
        ]
        log.order.clear()
        _pipeline(memory, paths, embedder).run(_query("Ana bike"), k=3)
    assert log.order == ["words", "names", "embed", "vector", "votes"]
    assert log.saw == {
        "words": (False, []),
        "names": (False, ["words"]),  # a text-only path reads none of it
        "vector": (True, []),
        "votes": (True, ["vector", "words"]),  # "names" comes after it in the configured order
    }


def test_a_failing_text_only_path_is_degraded_once_and_not_run_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = Log()
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        paths = [LoggedPath("vector", rowids, log), LoggedPath("words", rowids, log, text=True, fails=True)]
        result = _pipeline(memory, paths, LoggedEmbedder(log)).run(_query("Ana bike"), k=3)
    assert log.order.count("words") == 1
    assert set(result.degraded) == {"words"}
    assert result.hits


def test_the_store_paths_marked_text_only_give_the_same_recall_as_in_the_configured_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with _memory(tmp_path) as memory:
        pipeline = memory.pipeline
        marked = {name for name, path in pipeline.paths.items() if text_only(path)}
        assert marked == {"keyword", "graph"}
        queries = [
            "what did Ana do with the bike?",
            "when did Tom fix the printer?",
            "printer Berlin",
            "what happened in May 2024?",
            "who went to Oslo",
        ]
        early = [memory.recall(q, user_id="u1", k=5, now=NOW) for q in queries]
        pipeline.paths = {
            name: Plain(path) if name in marked else path for name, path in pipeline.paths.items()
        }
        assert not any(text_only(path) for path in pipeline.paths.values())
        in_order = [memory.recall(q, user_id="u1", k=5, now=NOW) for q in queries]

    def shown(result):  # type: ignore[no-untyped-def]
        return [(h.id, h.score, h.paths, h.ranks, h.path_scores, h.fused_rank) for h in result.hits]

    assert [shown(r) for r in early] == [shown(r) for r in in_order]
    assert any(r.hits for r in early)
