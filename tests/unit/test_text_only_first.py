"""Paths that read only the query's text run beside (or before) the embedding, with the same results."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt
import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import Candidate, RecallPath, RecallQuery
from dreammem.recall.beside import BesideEncoder, spare_cpu
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

    def __init__(self, name: str, rowids: Sequence[int], log: Log, *, fails: bool = False):
        self.name = name
        self._rowids = list(rowids)
        self._log = log
        self._fails = fails

    def search(self, query: RecallQuery) -> list[Candidate]:
        self._log.order.append(self.name)
        self._log.saw[self.name] = (query.embedding is not None, list(query.earlier))
        if self._fails:
            raise ConnectionError("server went away")
        return [Candidate(r, 1.0 / (n + 1)) for n, r in enumerate(self._rowids)]


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


def _pipeline(
    memory: DreamMemory, paths: Sequence[RecallPath], embedder: HashingEmbedder, *, beside: bool = False
) -> RecallPipeline:
    config = RecallConfig(paths=tuple(p.name for p in paths))
    return RecallPipeline(memory.store, {p.name: p for p in paths}, config, embedder=embedder, beside=beside)


def _query(text: str) -> RecallQuery:
    return RecallQuery(text=text, user_id="u1", limit=30, now=NOW)


def test_text_only_paths_run_before_the_embedding_and_the_others_see_the_paths_before_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = Log()
    embedder = LoggedEmbedder(log)
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        paths = [
            LoggedPath("vector", rowids[:3], log),
            LoggedPath("keyword", rowids[2:5], log),
            LoggedPath("reply", rowids[1:4], log),
            LoggedPath("graph", rowids[4:], log),
        ]
        log.order.clear()
        _pipeline(memory, paths, embedder).run(_query("Ana bike"), k=3)
    assert log.order == ["keyword", "graph", "embed", "vector", "reply"]
    assert log.saw == {
        "keyword": (False, []),
        "graph": (False, ["keyword"]),  # a text-only path reads none of it
        "vector": (True, []),
        "reply": (True, ["vector", "keyword", "graph"]),  # the recipe's order, not the configured one
    }


def test_a_failing_text_only_path_is_degraded_once_and_not_run_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = Log()
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        paths = [LoggedPath("vector", rowids, log), LoggedPath("keyword", rowids, log, fails=True)]
        result = _pipeline(memory, paths, LoggedEmbedder(log)).run(_query("Ana bike"), k=3)
    assert log.order.count("keyword") == 1
    assert set(result.degraded) == {"keyword"}
    assert result.hits


@pytest.mark.parametrize("beside", [True, False])
def test_the_order_paths_are_listed_in_and_the_helper_thread_change_nothing(tmp_path, beside: bool) -> None:  # type: ignore[no-untyped-def]
    with _memory(tmp_path) as memory:
        built = memory.pipeline
        config, embedder = built.config, built.embedder
        reversed_config = config.model_copy(update={"paths": tuple(reversed(config.active_paths))})
        early = RecallPipeline(memory.store, built.paths, config, embedder=embedder, beside=beside)
        in_order = RecallPipeline(memory.store, built.paths, reversed_config, embedder=embedder, beside=False)
        queries = [
            "what did Ana do with the bike?",
            "when did Tom fix the printer?",
            "printer Berlin",
            "what happened in May 2024?",
            "who went to Oslo",
        ]
        found = [early.run(_query(q), k=5) for q in queries]
        expected = [in_order.run(_query(q), k=5) for q in queries]

    def shown(result):  # type: ignore[no-untyped-def]
        return [(h.id, h.score, h.paths, h.ranks, h.path_scores, h.fused_rank) for h in result.hits]

    assert [shown(r) for r in found] == [shown(r) for r in expected]
    assert any(r.hits for r in found)
    assert all({"keyword", "graph", "embed"} <= set(r.timings_ms) for r in found)


class MeetingEmbedder(HashingEmbedder):
    """Notes its thread and signals that it started, then waits a moment for the text-only path."""

    def __init__(self, started: threading.Event, path_ran: threading.Event) -> None:
        super().__init__()
        self.started, self.path_ran = started, path_ran
        self.thread = 0

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.thread = threading.get_ident()
        self.started.set()
        self.path_ran.wait(5)
        return super().embed_query(text)


class MeetingPath:
    """A text-only path that notes its thread and whether the encoder was running at the same time."""

    name = "keyword"

    def __init__(self, started: threading.Event, path_ran: threading.Event, rowids: Sequence[int]) -> None:
        self.started, self.path_ran, self.rowids = started, path_ran, list(rowids)
        self.thread = 0
        self.met = False

    def search(self, query: RecallQuery) -> list[Candidate]:
        self.thread = threading.get_ident()
        self.met = self.started.wait(5)
        self.path_ran.set()
        return [Candidate(r, 1.0) for r in self.rowids]


def test_with_a_helper_thread_the_text_only_paths_run_while_the_caller_embeds(tmp_path) -> None:  # type: ignore[no-untyped-def]
    started, path_ran = threading.Event(), threading.Event()
    embedder = MeetingEmbedder(started, path_ran)
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        words = MeetingPath(started, path_ran, rowids[:3])
        paths = [LoggedPath("vector", rowids[3:], Log()), words]
        result = _pipeline(memory, paths, embedder, beside=True).run(_query("Ana bike"), k=3)
    assert words.met and path_ran.is_set()
    assert embedder.thread == threading.get_ident() != words.thread
    assert result.hits and not result.degraded


def test_a_failing_path_beside_the_encoder_is_degraded_and_the_recall_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    log = Log()
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        paths = [LoggedPath("vector", rowids, log), LoggedPath("keyword", rowids, log, fails=True)]
        result = _pipeline(memory, paths, LoggedEmbedder(log), beside=True).run(_query("Ana bike"), k=3)
    assert log.order.count("keyword") == 1
    assert set(result.degraded) == {"keyword"} and "keyword" in result.timings_ms
    assert result.hits


def test_the_helper_returns_both_results_and_waits_for_its_work_when_the_caller_fails() -> None:
    helper = BesideEncoder()
    assert helper.run(lambda: threading.get_ident(), lambda: "here")[1] == "here"
    assert helper.run(lambda: threading.get_ident(), threading.get_ident)[0] != threading.get_ident()
    finished = threading.Event()

    def slow() -> None:
        time.sleep(0.05)
        finished.set()

    def broken() -> None:
        raise RuntimeError("encoder failed")

    with pytest.raises(RuntimeError, match="encoder failed"):
        helper.run(slow, broken)
    assert finished.is_set()
    with pytest.raises(ValueError, match="beside failed"):
        helper.run(lambda: (_ for _ in ()).throw(ValueError("beside failed")), lambda: None)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")
def test_a_forked_child_gets_helper_threads_of_its_own() -> None:
    helper = BesideEncoder()
    assert helper.run(lambda: 1, lambda: 2) == (1, 2)  # the parent's threads are running
    pid = os.fork()
    if pid == 0:  # the child: the parent's helper threads do not exist here
        signal.alarm(10)  # a call waiting on threads that do not exist fails the test, not hangs it
        code = 0 if helper.run(lambda: 3, lambda: 4) == (3, 4) else 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


class PreparingPath(LoggedPath):
    """A path that also prepares: notes the thread and whether the embedding was there yet."""

    def __init__(self, name: str, rowids: Sequence[int], log: Log, *, breaks: bool = False) -> None:
        super().__init__(name, rowids, log)
        self.prepared: list[tuple[int, bool]] = []
        self._breaks = breaks

    def prepare(self, query: RecallQuery) -> None:
        self.prepared.append((threading.get_ident(), query.embedding is not None))
        if self._breaks:
            raise ConnectionError("server went away")


@pytest.mark.parametrize("breaks", [False, True])
def test_beside_the_encoder_the_other_paths_prepare_on_the_helper_thread(tmp_path, breaks: bool) -> None:  # type: ignore[no-untyped-def]
    log = Log()
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        later = PreparingPath("temporal", rowids[:2], log, breaks=breaks)
        paths = [LoggedPath("vector", rowids, log), LoggedPath("keyword", rowids, log), later]
        beside = _pipeline(memory, paths, LoggedEmbedder(log), beside=True).run(_query("Ana bike"), k=3)
        (thread, had_embedding), *more = later.prepared
        assert not more and thread != threading.get_ident() and not had_embedding
        assert later.name in log.order  # its search still ran (after a failed prepare too)
        assert not beside.degraded and beside.hits
        later.prepared.clear()
        _pipeline(memory, paths, LoggedEmbedder(log), beside=False).run(_query("Ana bike"), k=3)
        assert later.prepared == []  # in the caller, search reads what it needs itself


def test_recalls_from_many_threads_share_the_helpers_and_answer_as_one_at_a_time(tmp_path) -> None:  # type: ignore[no-untyped-def]
    queries = ["what did Ana do with the bike?", "printer Berlin", "what happened in May 2024?", "Oslo"] * 5
    with _memory(tmp_path) as memory:
        built = memory.pipeline
        pipeline = RecallPipeline(
            memory.store, built.paths, built.config, embedder=built.embedder, beside=True
        )
        alone = {q: [h.id for h in pipeline.run(_query(q), k=5).hits] for q in set(queries)}
        found: list[tuple[str, list[str]]] = []
        errors: list[BaseException] = []

        def recall(text: str) -> None:
            try:
                found.append((text, [h.id for h in pipeline.run(_query(text), k=5).hits]))
            except BaseException as exc:  # collected for the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=recall, args=(q,)) for q in queries]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
    assert not errors and len(found) == len(queries)
    assert all(ids == alone[text] for text, ids in found)


def test_a_recall_inside_a_store_transaction_keeps_its_paths_in_the_caller(tmp_path) -> None:  # type: ignore[no-untyped-def]
    memory = _memory(tmp_path)
    built = memory.pipeline
    pipeline = RecallPipeline(memory.store, built.paths, built.config, embedder=built.embedder, beside=True)
    expected = [h.id for h in pipeline.run(_query("printer Berlin"), k=5).hits]
    found: list[list[str]] = []

    def recall_in_transaction() -> None:
        with memory.store.transaction():
            assert memory.store.in_transaction_here()
            found.append([h.id for h in pipeline.run(_query("printer Berlin"), k=5).hits])

    # A helper thread would wait for the transaction, and the caller for the helper.
    thread = threading.Thread(target=recall_in_transaction, daemon=True)
    thread.start()
    thread.join(20)
    stuck = thread.is_alive()
    if not stuck:  # closing waits for the store's lock: a stuck recall holds it
        assert not memory.store.in_transaction_here()
        memory.close()
    assert not stuck, "the recall waited for a helper that waited for the recall's transaction"
    assert found == [expected] and expected


@pytest.mark.parametrize("setting", [True, False, None])
def test_the_config_decides_whether_paths_run_beside_the_encoder(tmp_path, setting: bool | None) -> None:  # type: ignore[no-untyped-def]
    config = DreamMemConfig(recall=RecallConfig(paths_beside_encoder=setting))
    with DreamMemory(tmp_path / "s", config=config, embedder=HashingEmbedder()) as memory:
        expected = spare_cpu() if setting is None else setting
        assert memory.pipeline.beside_encoder is expected


class WaitingWords:
    """A text-only path that waits (3 s at most) for the graph path to have run; notes whether it did."""

    name = "keyword"

    def __init__(self, graph_ran: threading.Event, rowids: Sequence[int]) -> None:
        self.graph_ran, self.rowids = graph_ran, list(rowids)
        self.met = False

    def search(self, query: RecallQuery) -> list[Candidate]:
        self.met = self.graph_ran.wait(3)
        return [Candidate(r, 1.0) for r in self.rowids]


class SignallingPath(LoggedPath):
    """A logged path noting its thread and that it ran."""

    def __init__(self, name: str, rowids: Sequence[int], log: Log, ran: threading.Event) -> None:
        super().__init__(name, rowids, log)
        self.ran = ran
        self.thread = 0

    def search(self, query: RecallQuery) -> list[Candidate]:
        self.thread = threading.get_ident()
        found = super().search(query)
        self.ran.set()
        return found


def test_with_a_helper_thread_the_vector_and_graph_paths_run_while_the_keyword_search_does(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Neither reads another path's candidates: they need not wait for the keyword search."""
    log, ran = Log(), threading.Event()
    with _memory(tmp_path) as memory:
        rowids = list(memory.store.rowids("u1", [r.id for r in memory.store.find("u1")]).values())
        words = WaitingWords(ran, rowids[:3])
        vector = SignallingPath("vector", rowids[3:], log, threading.Event())
        graph = SignallingPath("graph", rowids[2:4], log, ran)
        paths = [vector, words, graph, LoggedPath("reply", rowids[1:4], log)]
        result = _pipeline(memory, paths, LoggedEmbedder(log), beside=True).run(_query("Ana bike"), k=3)
    assert words.met
    assert vector.thread == graph.thread == threading.get_ident()
    assert log.order == ["embed", "vector", "graph", "reply"]
    assert log.saw == {
        "vector": (True, []),
        "graph": (True, ["vector"]),  # a text-only path reads none of it
        "reply": (True, ["vector", "keyword", "graph"]),
    }
    assert result.hits and not result.degraded and {"vector", "keyword", "graph"} <= set(result.timings_ms)
