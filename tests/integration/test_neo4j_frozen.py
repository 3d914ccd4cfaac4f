"""A frozen Neo4j server (SIGSTOP) holds no call past twice its timeout (issue 35, items 1 and 6).

The server is stopped with SIGSTOP after a few recalls, so the connections already in
the driver's pool stay open and nothing answers on them: every call on both backends
that use Neo4j must return, or raise a typed retryable error, within 2 × the configured
timeout. A recall none of whose paths could answer is that error, not an empty
answer, and the adapters pass it on. After SIGCONT the store works again and every
acknowledged write is there.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.agent_api import ChatTurn, history_block, memory_block
from dreammem.config import DreamMemConfig, Neo4jGraphConfig, Neo4jStoreConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import BackendError, GraphUnavailableError
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

TIMEOUT = 5.0  # the default: a test server on 2 busy cores may take seconds for a handshake
BOUND = 2 * TIMEOUT + 1.0  # 2 x the timeout, and a second of scheduling noise
SLOW_QUERIES = 300.0  # the server-side query limit: a starved test server is slow, not frozen
BACK_WITHIN = 40.0  # seconds after SIGCONT: the breaker probes again after 10 s


def _timed(call: Callable[[], Any]) -> tuple[float, BaseException | None]:
    start = time.monotonic()
    try:
        call()
    except BaseException as exc:  # returned for the test to assert on
        return time.monotonic() - start, exc
    return time.monotonic() - start, None


def _until_it_works(call: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + BACK_WITHIN
    while True:
        try:
            return call()
        except BackendError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _typed_or_answered(name: str, took: float, error: BaseException | None) -> None:
    assert took <= BOUND, f"{name} took {took:.1f} s on a frozen server (bound {BOUND} s)"
    if error is not None:
        assert isinstance(error, BackendError) and error.is_retryable, f"{name}: {error!r}"


def test_the_whole_store_on_a_frozen_server_answers_within_twice_its_timeout(
    neo4j_server: Neo4jServer,
) -> None:
    user = f"frozen-{uuid.uuid4().hex[:8]}"
    config = DreamMemConfig(store=Neo4jStoreConfig(timeout=TIMEOUT, query_timeout=SLOW_QUERIES))
    with DreamMemory(neo4j_server.uri, config=config, embedder=HashingEmbedder()) as memory:
        acknowledged = [memory.add(f"Rex walked {n} km at Cannon Beach.", user_id=user).id for n in range(3)]
        for query in ("Where does Rex walk?", "Cannon Beach", "How far?"):
            assert memory.recall(query, user_id=user, k=3).hits
        calls: dict[str, Callable[[], Any]] = {
            "recall": lambda: memory.recall("Where does Rex walk?", user_id=user, k=3),
            "add": lambda: memory.add("Rex met a seal.", user_id=user),
            "get": lambda: memory.get(acknowledged[0], user_id=user),
            "get_all": lambda: memory.get_all(user_id=user),
            "memory_block": lambda: memory_block(memory, "Where does Rex walk?", user_id=user),
            "history_block": lambda: history_block(
                memory, [ChatTurn("user", "Where does Rex walk?")], user_id=user
            ),
        }
        with neo4j_server.frozen():
            for round_ in range(2):  # the first round meets the frozen server, the second the open breaker
                for name, call in calls.items():
                    took, error = _timed(call)
                    _typed_or_answered(f"{name} (round {round_})", took, error)
                    if name in ("recall", "memory_block", "history_block"):
                        # Every recall path failed: an error, never an empty answer (item 6).
                        assert isinstance(error, GraphUnavailableError), f"{name}: {error!r}"
        _until_it_works(lambda: memory.add("Rex is back home.", user_id=user))
        kept = {r.id for r in memory.get_all(user_id=user)}
        assert set(acknowledged) <= kept
        assert memory.recall("Where does Rex walk?", user_id=user, k=3).hits
        memory.purge(user_id=user)


def test_an_embedded_store_with_a_frozen_neo4j_graph_answers_within_twice_its_timeout(
    tmp_path: Path, neo4j_server: Neo4jServer
) -> None:
    user = f"frozen-graph-{uuid.uuid4().hex[:8]}"
    config = DreamMemConfig(graph=Neo4jGraphConfig(uri=neo4j_server.uri, timeout=TIMEOUT))
    with DreamMemory(tmp_path / "store", config=config, embedder=HashingEmbedder()) as memory:
        acknowledged = [
            memory.add("Caroline adopted a puppy named Rex.", user_id=user).id,
            memory.add("Rex loves running at Cannon Beach.", user_id=user).id,
        ]
        for query in ("Where does Caroline go?", "Tell me about Rex"):
            assert not memory.recall(query, user_id=user, k=3).degraded
        with neo4j_server.frozen():
            for round_ in range(2):
                took, error = _timed(lambda: memory.recall("Where does Rex go?", user_id=user, k=3))
                _typed_or_answered(f"recall (round {round_})", took, error)
                assert error is None  # the embedded paths still answer; the graph drops out
                took, error = _timed(partial(memory.add, f"Rex dug a hole, take {round_}.", user_id=user))
                _typed_or_answered(f"add (round {round_})", took, error)
                assert error is None  # the graph's share waits in the outbox
                acknowledged.append(memory.get_all(user_id=user)[0].id)
            took, error = _timed(lambda: memory.recall("Rex", user_id=user, k=3, paths=["graph"]))
            _typed_or_answered("graph-only recall", took, error)
            assert isinstance(error, GraphUnavailableError)  # its only path failed

        def graph_answers() -> None:
            result = memory.recall("Tell me about Rex", user_id=user, k=3, paths=["graph"])
            assert not result.degraded

        _until_it_works(graph_answers)
        _until_it_works(memory.sync_graph)  # the outbox replays (also by itself, on later calls)
        memory.add("Rex is back home.", user_id=user)
        assert memory.stats()["graph_outbox"] == 0
        assert set(acknowledged) <= {r.id for r in memory.get_all(user_id=user)}
        assert memory.graph is not None
        memory.graph.clear(user)


def test_the_adapters_pass_a_failed_recall_on(neo4j_server: Neo4jServer) -> None:
    """LangChain's middleware and LlamaIndex's memory raise the typed error instead of injecting nothing."""
    from langchain.agents import create_agent  # noqa: PLC0415 - optional extra
    from langchain_core.messages import AIMessage, HumanMessage  # noqa: PLC0415 - optional extra

    from langchain_dreammem import DreamMemMiddleware  # noqa: PLC0415 - optional extra
    from langchain_dreammem.testing import ScriptedChatModel  # noqa: PLC0415 - optional extra
    from llamaindex_dreammem import DreamMemMemory  # noqa: PLC0415 - optional extra

    user = f"frozen-adapters-{uuid.uuid4().hex[:8]}"
    config = DreamMemConfig(store=Neo4jStoreConfig(timeout=TIMEOUT, query_timeout=SLOW_QUERIES))
    with DreamMemory(neo4j_server.uri, config=config, embedder=HashingEmbedder()) as memory:
        memory.add("Rex loves Cannon Beach.", user_id=user)
        li_memory = DreamMemMemory.from_defaults(memory=memory, user_id=user, session_id="s1")
        model = ScriptedChatModel(replies=[AIMessage("Cannon Beach.")])
        agent = create_agent(model, middleware=[DreamMemMiddleware(memory)])
        question: Any = {"messages": [HumanMessage("Where does Rex go?")]}
        run: Any = {"configurable": {"thread_id": "t1"}}
        context: Any = {"user_id": user}
        assert "Cannon Beach" in str(li_memory.get(input="Where does Rex go?")[0].content)
        with neo4j_server.frozen():
            took, error = _timed(lambda: li_memory.get(input="Where does Rex go?"))
            _typed_or_answered("LlamaIndex get", took, error)
            assert isinstance(error, GraphUnavailableError)
            took, error = _timed(lambda: agent.invoke(question, run, context=context))
            _typed_or_answered("LangChain agent", took, error)
            assert isinstance(error, GraphUnavailableError)
            assert model.prompts == []  # the model was not called without the memory it expects
        _until_it_works(lambda: memory.recall("Rex", user_id=user, k=1))
        memory.purge(user_id=user)
