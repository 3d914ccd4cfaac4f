"""An import is all or nothing: SIGKILL at any moment leaves none of it or all of it.

A child process imports an export of many records (more than one write batch of the
old importer, which committed every 500 records) and is SIGKILLed at points spread
over the whole import. Reopened, the target store must hold either no record and no
task state of the user, or every one; the FAISS index must match SQLite; and running
the import again must complete it.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder

CHILD = Path(__file__).with_name("import_child.py")
RECORDS = 1_200
KILLS = 3


def _export(tmp_path: Path) -> Path:
    with DreamMemory(tmp_path / "source", embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [
                {
                    "content": f"turn {n}: the crate of lot {n} ships to dock {n % 17}",
                    "user_id": "u1",
                    "session_id": f"s{n // 40}",
                }
                for n in range(RECORDS)
            ]
        )
        memory.set_task_state({"goal": "ship every lot"}, user_id="u1", session_id="s0")
        text = memory.export(user_id="u1")
    file = tmp_path / "u1.jsonl"
    file.write_text(text, encoding="utf-8")
    return file


def _run(path: Path, file: Path, kill_after: float | None) -> tuple[bool, float]:
    """Run the child; kill it ``kill_after`` seconds into the import. (finished, seconds)."""
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path), str(file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    if kill_after is not None:
        time.sleep(kill_after)
        child.send_signal(signal.SIGKILL)
    out = child.stdout.read()
    child.wait(timeout=300)
    child.stdout.close()
    return "done" in out, time.perf_counter() - started


def _state(path: Path) -> tuple[int, int, bool]:
    """(records of the user, its queue, whether its task state is there); FAISS checked against SQLite."""
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        stats = memory.stats(user_id="u1")
        assert stats["vectors"] == stats["records"]["active"], "FAISS differs from SQLite"
        has_state = bool(memory.task_state(user_id="u1", session_id="s0"))
        return sum(stats["records"].values()), stats["queue"], has_state


@pytest.mark.slow
def test_sigkill_during_an_import_leaves_all_or_nothing(tmp_path: Path) -> None:
    file = _export(tmp_path)
    finished, took = _run(tmp_path / "timing", file, None)
    assert finished
    whole = _state(tmp_path / "timing")
    assert whole[0] >= RECORDS and whole[2]
    rng = random.Random(11)
    outcomes = []
    for kill in range(KILLS):
        path = tmp_path / f"target{kill}"
        finished, _ = _run(path, file, took * (kill + rng.random()) / KILLS)
        state = _state(path)
        outcomes.append((finished, state[0]))
        assert state in {(0, 0, False), whole}, f"kill {kill} at a part of the import: {state}"
        # A kill can land after the commit but before the child says "done": whole, not finished.
        assert state == whole if finished else state in {(0, 0, False), whole}
        with DreamMemory(path, embedder=HashingEmbedder()) as memory:
            memory.import_(file, user_id="u1")  # rerun: completes it
        assert _state(path) == whole
    assert any(not finished for finished, _ in outcomes), f"no kill landed inside the import: {outcomes}"
