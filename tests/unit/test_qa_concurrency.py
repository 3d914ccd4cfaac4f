"""Threads, event loops and async twins: same answers, no leaks, nothing lost."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dreammem import DreamMemory, NotFoundError, Status
from dreammem.embed import HashingEmbedder

TURNS = [
    "I prefer window seats when I fly",
    "My budget is 5000 USD",
    "Order #48213 ships on 2024-07-15",
    "We went kayaking in Norway last summer",
    "记住：我对花生过敏",
]


def _run_threads(workers: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []

    def guard(work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as exc:  # collected and asserted in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=guard, args=(w,)) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_threads_of_many_users_write_read_and_forget_without_leaks(tmp_path: Path) -> None:
    users = [f"user-{n}" for n in range(4)]
    written: dict[str, list[str]] = {u: [] for u in users}
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:

        def worker(user: str) -> Callable[[], None]:
            def run() -> None:
                for i in range(12):
                    text = f"{TURNS[i % len(TURNS)]} ({user} #{i})"
                    record = memory.add(text, user_id=user, session_id=user)
                    written[user].append(record.id)
                    hits = memory.recall(TURNS[(i + 1) % len(TURNS)], user_id=user, k=5)
                    assert {h.record.user_id for h in hits} <= {user}
                    assert all(h.record.is_active for h in hits)
                    if i % 4 == 3:
                        memory.forget(written[user][i - 1], user_id=user)
                    other = users[(users.index(user) + 1) % len(users)]
                    for record_id in list(written[other])[:2]:
                        try:
                            memory.get(record_id, user_id=user)
                        except NotFoundError:
                            continue
                        raise AssertionError("read another user's record")

            return run

        errors = _run_threads([worker(u) for u in users])
        assert not errors, errors
        expected = sum(len(ids) for ids in written.values())
        assert memory.store.count() >= expected
        vectors = memory.stats()["vectors"]
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        assert memory.stats()["vectors"] == vectors
        for user, ids in written.items():
            assert [r.user_id for r in memory.store.get(user, ids)] == [user] * len(ids)


class _WritesDuringDreams(HashingEmbedder):
    """Each time a dream embeds (between reading the queue and committing), another
    thread writes a new budget for the user, superseding a queued turn."""

    def __init__(self) -> None:
        super().__init__()
        self.memory: DreamMemory | None = None
        self.writers: list[threading.Thread] = []

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if self.memory is not None and threading.current_thread() is threading.main_thread():
            memory, n = self.memory, len(self.writers)
            text = f"Actually my budget is {6000 + n} USD"
            writer = threading.Thread(target=lambda: memory.add(text, user_id="u1", session_id="s"))
            self.writers.append(writer)
            writer.start()
            writer.join(timeout=1.0)  # blocks only while a dream holds the write lock
        return super().embed_documents(texts)


def test_a_dream_is_not_starved_by_a_busy_writer() -> None:
    embedder = _WritesDuringDreams()
    with DreamMemory(embedder=embedder) as memory:
        memory.add("My budget is 5000 USD", user_id="u1", session_id="s")
        for _ in range(3):
            memory.add("I prefer Excel reports over PDF", user_id="u1", session_id="s")
        embedder.memory = memory
        report = memory.dream(user_id="u1")
        embedder.memory = None
        for writer in embedder.writers:
            writer.join()
        assert len(embedder.writers) >= 3  # every optimistic try was raced
        assert report.distilled
        (budget,) = [r for r in memory.get_all(user_id="u1", layer="semantic") if "budget" in r.content]
        assert budget.content == f"Actually my budget is {6000 + len(embedder.writers) - 1} USD"


def test_dreams_and_writes_in_parallel_lose_no_turn(tmp_path: Path) -> None:
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as memory:
        ids: list[str] = []

        def writer() -> None:
            for i in range(30):
                ids.append(memory.add(f"{TURNS[i % len(TURNS)]} take {i}", user_id="u1", session_id="s").id)

        def dreamer() -> None:
            for _ in range(4):
                memory.dream(user_id="u1")

        errors = _run_threads([writer, dreamer])
        assert not errors, errors
        memory.dream(user_id="u1")
        assert memory.stats(user_id="u1")["queue"] == 0
        # Every turn is still there (active, or archived/superseded by a dream, never destroyed).
        assert len(memory.store.get("u1", ids)) == 30


async def test_async_twins_equal_the_sync_methods() -> None:
    sync = DreamMemory(embedder=HashingEmbedder())
    asyn = DreamMemory(embedder=HashingEmbedder())
    try:
        for text in TURNS:
            sync.add(text, user_id="u1", session_id="s")
            await asyn.aadd(text, user_id="u1", session_id="s")
        batch = [{"content": f"batch note {i} about kayaks", "user_id": "u1"} for i in range(3)]
        sync.add_many(batch)
        await asyn.aadd_many(iter(batch))
        sync.remember("Allergic to peanuts", user_id="u1")
        await asyn.aremember("Allergic to peanuts", user_id="u1")

        def view(memory: DreamMemory) -> list[tuple[str, str]]:
            return [(r.content, r.status.value) for r in memory.get_all(user_id="u1", status=None)]

        assert view(sync) == view(asyn)
        for query in ["window seat", "budget", "kayaks", "花生"]:
            a = sync.recall(query, user_id="u1", k=4)
            b = await asyn.arecall(query, user_id="u1", k=4)
            assert [(h.record.content, h.paths, round(h.score, 9)) for h in a] == [
                (h.record.content, h.paths, round(h.score, 9)) for h in b
            ]
        target_sync = sync.get_all(user_id="u1", layer="episodic")[0]
        target_async = await asyn.aget(asyn.get_all(user_id="u1", layer="episodic")[0].id, user_id="u1")
        assert target_sync.content == target_async.content
        forgotten_sync = sync.forget(target_sync.id, user_id="u1", twins=False)
        forgotten_async = await asyn.aforget(target_async.id, user_id="u1", twins=False)
        assert forgotten_sync.status is forgotten_async.status is Status.DELETED
        assert view(sync) == view(asyn)
    finally:
        sync.close()
        asyn.close()


async def test_concurrent_async_calls_from_one_loop_stay_scoped(memory: DreamMemory) -> None:
    await asyncio.gather(*(memory.aadd(f"{t} for {u}", user_id=u) for t in TURNS for u in ("a", "b")))
    results = await asyncio.gather(*(memory.arecall(t, user_id=u, k=3) for t in TURNS for u in ("a", "b")))
    for index, result in enumerate(results):
        user = ("a", "b")[index % 2]
        assert result.hits and {h.record.user_id for h in result} == {user}


def test_fresh_event_loops_in_worker_threads(memory: DreamMemory) -> None:
    """LlamaIndex runs sync calls through a new event loop per worker thread."""

    def in_new_loop(n: int) -> Callable[[], None]:
        def run() -> None:
            async def work() -> None:
                await memory.aadd(f"thread {n} visited Lisbon", user_id=f"t{n}")
                found = await memory.arecall("Lisbon", user_id=f"t{n}")
                assert [h.record.user_id for h in found] == [f"t{n}"]

            asyncio.run(work())

        return run

    assert not _run_threads([in_new_loop(n) for n in range(4)])


def test_retrieval_never_raises_confidence(memory: DreamMemory) -> None:
    memory.add("My budget is 5000 USD", user_id="u1")
    memory.add("The assistant guessed the user likes jazz", user_id="u1", role="assistant")
    before = {r.id: r for r in memory.get_all(user_id="u1")}
    for _ in range(15):
        memory.recall("budget jazz", user_id="u1", k=5)
    memory.dream(user_id="u1")
    after = {r.id: r for r in memory.get_all(user_id="u1", status=None)}
    for record_id, old in before.items():
        assert after[record_id].confidence <= old.confidence
    assert max(r.access_count for r in after.values()) >= 15


def test_two_instances_on_one_path_leave_a_complete_index(tmp_path: Path) -> None:
    """Each instance keeps its own FAISS copy; whichever closes last must not hide the other's writes."""
    first = DreamMemory(tmp_path, embedder=HashingEmbedder())
    second = DreamMemory(tmp_path, embedder=HashingEmbedder())
    a = first.add("alpha kayak", user_id="u1")
    b = second.add("beta kayak", user_id="u1")
    first.close()
    second.close()
    with DreamMemory(tmp_path, embedder=HashingEmbedder()) as reopened:
        found = reopened.recall("kayak", user_id="u1", k=5, paths=["vector"])
        assert sorted(found.ids) == sorted([a.id, b.id])
        assert reopened.stats()["vectors"] == 2
