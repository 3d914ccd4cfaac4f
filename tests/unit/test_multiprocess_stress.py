"""4 writer processes x 2,000 writes and a long-lived reader on one embedded store.

Every writer mixes single ``add`` calls and ``add_many`` batches, to its own user and
to one shared user. Afterwards every process, the reader included (which never
reopens), must find every record through its own vector index, and SQLite must hold
each acknowledged write exactly once.
"""

from __future__ import annotations

import multiprocessing
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from dreammem import DreamMemory, Kind
from dreammem.embed import HashingEmbedder

SPAWN = multiprocessing.get_context("spawn")
WRITERS = 4
WRITES = 2_000
BATCH = 25
SHARED = "shared"
SAMPLE = 100  # full recalls per process, on top of the index check of every record
EMBEDDER_DIM = 1024  # few hash collisions between the records' unique words


def _content(writer: int, n: int) -> str:
    return f"logbook entry from writer w{writer}n{n} marker k{n}v{writer} tag t{writer}x{n}"


def _user(writer: int, n: int) -> str:
    return SHARED if n % 2 else f"own{writer}"


def _turns(writer: int, start: int, stop: int) -> list[dict[str, Any]]:
    return [{"content": _content(writer, n), "user_id": _user(writer, n)} for n in range(start, stop)]


def _write(path: str, writer: int, results: Any, done: Any) -> None:
    try:
        memory = DreamMemory(path, embedder=HashingEmbedder(EMBEDDER_DIM))
        acknowledged: list[str] = []
        n = 0
        while n < WRITES:
            if (n // BATCH) % 2:  # alternate runs of single adds and one batched add_many
                acknowledged.extend(r.id for r in memory.add_many(_turns(writer, n, n + BATCH)))
                n += BATCH
            else:
                acknowledged.append(memory.add(_content(writer, n), user_id=_user(writer, n)).id)
                n += 1
            if n % 200 == 0:
                memory.recall(_content(writer, n - 1), user_id=_user(writer, n - 1), k=3)
        results.put(("written", writer, acknowledged))
        done.wait(timeout=600)  # every writer has finished: check what this process sees
        results.put(("checked", writer, _check(memory)))
        memory.close()
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(("error", writer, f"{type(exc).__name__}: {exc}"))


def _read(path: str, ready: Any, results: Any, done: Any) -> None:
    try:
        memory = DreamMemory(path, embedder=HashingEmbedder(EMBEDDER_DIM))
        ready.set()
        rng = random.Random(7)
        while not done.is_set():  # long-lived: recalls while the writers write, never reopens
            writer, n = rng.randrange(WRITERS), rng.randrange(WRITES)
            memory.recall(_content(writer, n), user_id=_user(writer, n), k=5)
        results.put(("checked", "reader", _check(memory)))
        memory.close()
    except Exception as exc:  # reported to the parent, which asserts on it
        results.put(("error", "reader", f"{type(exc).__name__}: {exc}"))


def _check(memory: DreamMemory) -> dict[str, Any]:
    """What this process's own vector index and recall find of every record."""
    memory.recall("what was written meanwhile?", user_id=SHARED)  # the next call: it catches up
    index, embedder = memory.vector_index, memory.embedder
    missing, held, expected = 0, 0, 0
    for user in [SHARED, *(f"own{w}" for w in range(WRITERS))]:
        records = memory.store.find(user)
        expected += len(records)
        held += index.count(user)
        rowids = memory.store.rowids(user, [r.id for r in records])
        vectors = embedder.embed_documents([r.content for r in records])
        for record, vector in zip(records, vectors, strict=True):
            found = [i for i, _ in index.search(user, np.asarray(vector), 5)]
            missing += rowids[record.id] not in found
    rng = random.Random(11)
    misses = 0
    for _ in range(SAMPLE):
        writer, n = rng.randrange(WRITERS), rng.randrange(WRITES)
        hits = memory.recall(_content(writer, n), user_id=_user(writer, n), k=5, paths=["vector"])
        misses += _content(writer, n) not in [h.record.content for h in hits]
    return {"missing": missing, "held": held, "expected": expected, "recall_misses": misses}


@pytest.mark.slow
def test_four_writers_and_a_long_lived_reader_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "store")
    DreamMemory(path, embedder=HashingEmbedder(EMBEDDER_DIM)).close()
    ready, done, results = SPAWN.Event(), SPAWN.Event(), SPAWN.Queue()
    reader = SPAWN.Process(target=_read, args=(path, ready, results, done))
    reader.start()
    assert ready.wait(timeout=120)
    writers = [SPAWN.Process(target=_write, args=(path, w, results, done)) for w in range(WRITERS)]
    for process in writers:
        process.start()
    acknowledged: dict[int, list[str]] = {}
    while len(acknowledged) < WRITERS:
        kind, who, payload = results.get(timeout=900)
        assert kind == "written", payload
        acknowledged[who] = payload
    done.set()
    checks = {}
    while len(checks) < WRITERS + 1:
        kind, who, payload = results.get(timeout=600)
        assert kind == "checked", payload
        checks[who] = payload
    for process in [reader, *writers]:
        process.join(timeout=60)
        assert process.exitcode == 0

    with DreamMemory(path, embedder=HashingEmbedder(EMBEDDER_DIM)) as memory:
        turns = [
            r
            for user in [SHARED, *(f"own{w}" for w in range(WRITERS))]
            for r in memory.store.find(user, kinds=[Kind.TURN])
        ]
        contents = [t.content for t in turns]
        ids = {t.id for t in turns}
    expected = {_content(w, n) for w in range(WRITERS) for n in range(WRITES)}
    assert len(contents) == WRITERS * WRITES == len(set(contents))  # 0 duplicated
    assert set(contents) == expected  # 0 lost
    assert all(set(a) <= ids and len(a) == WRITES for a in acknowledged.values())
    for who, check in checks.items():  # every record recallable by every process
        assert check["missing"] == 0, (who, check)
        assert check["held"] == check["expected"] >= WRITERS * WRITES, (who, check)
        assert check["recall_misses"] == 0, (who, check)
