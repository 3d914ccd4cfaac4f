"""Facade behaviours at the edges: a recall that needs no model, forgetting twice, an LLM set
after opening, the queue's limit, keyed reads of plain records, per-user locks."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dreammem import DreamMemory, Status, ValidationError
from dreammem.embed import HashingEmbedder
from dreammem.engine.locks import UserLocks
from dreammem.keyed import keyed_entry
from dreammem_bench.scripted_llm import ScriptedDreamLLM
from tests.unit.dream.support import seed


def test_recall_on_a_new_store_answers_empty_without_loading_a_model(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "new") as memory:  # the default model, never loaded here
        result = memory.recall("anything at all", user_id="u1")
        assert result.hits == () and result.budget_tokens == memory.config.recall.budget_tokens
        assert not memory.engine.has_embedder
        assert memory.stats()["embedding_model"] is None


def test_forgetting_twice_changes_nothing_the_second_time(memory: DreamMemory) -> None:
    record = memory.add("I parked on level 3", user_id="u1")
    first = memory.forget(record.id, user_id="u1")
    generation = memory.store.get_meta("vector_generation")
    again = memory.forget(record.id, user_id="u1")
    assert first.status is again.status is Status.DELETED
    assert again == first
    assert memory.store.get_meta("vector_generation") == generation  # no write at all


def test_an_llm_set_after_opening_is_the_one_dreams_use(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        seed(memory)
        assert memory.llm is None
        llm = ScriptedDreamLLM()
        memory.llm = llm
        assert memory.llm is llm
        report = memory.dream(user_id="u1")
        assert report.counts["llm_calls"] > 0 and report.mode != "rules"


def test_the_queue_is_read_oldest_first_up_to_a_limit(memory: DreamMemory) -> None:
    added = [memory.add(f"note number {n}", user_id="u1") for n in range(5)]
    assert [r.id for r in memory.store.queued("u1", limit=2)] == [r.id for r in added[:2]]
    assert [r.id for r in memory.store.queued("u1")] == [r.id for r in added]
    assert memory.store.queued("u2", limit=2) == []


def test_a_plain_record_has_no_keyed_view(memory: DreamMemory) -> None:
    record = memory.remember("not a keyed memory", user_id="u1")
    with pytest.raises(ValidationError, match="is not a keyed memory"):
        keyed_entry(record)


def test_a_busy_users_lock_is_refused_without_waiting_and_other_users_are_free() -> None:
    locks = UserLocks()
    entered, release = threading.Event(), threading.Event()

    def hold() -> None:
        with locks.hold("u1") as acquired:
            assert acquired
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    assert entered.wait(5)
    assert locks.busy("u1") and not locks.busy("u2")
    with locks.hold("u1", blocking=False) as acquired:
        assert not acquired
    with locks.hold("u2", blocking=False) as acquired:
        assert acquired
    release.set()
    worker.join(5)
    assert not locks.busy("u1")
    with locks.hold("u1", blocking=False) as acquired:
        assert acquired
