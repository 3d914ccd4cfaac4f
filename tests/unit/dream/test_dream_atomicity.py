"""A dream killed at any point leaves the old state or the new one, never a half.

A child process dreams over a copy of the same store and is SIGKILLed at points
spread evenly (with jitter) over the whole dream and the close after it. After each
kill the store is reopened: it must equal either the state before the dream (queue
intact, no dream logged) or the state after an uninterrupted dream; and dreaming
again must then give exactly the uninterrupted result, with no duplicates.
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from tests.unit.dream.support import T0, conversation, seed

CHILD = Path(__file__).with_name("dream_child.py")
KILLS = 12
DELAY = "0.004"


def _state(path: Path) -> tuple[Any, ...]:
    """The store's content with the random ids of new records replaced by their text."""
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        rows = memory.store.fetchall("SELECT * FROM records ORDER BY rowid")
        content = {r["id"]: r["content"] for r in rows}
        original = set(_ORIGINAL_IDS)

        def ref(record_id: str | None) -> str | None:
            if record_id is None or record_id in original:
                return record_id
            return "new:" + content.get(record_id, "?")

        records = sorted(
            (
                ref(r["id"]),
                r["content"],
                r["status"],
                r["layer"],
                r["kind"],
                r["importance"],
                r["pinned"],
                ref(r["superseded_by"]),
                r["provenance"],
            )
            for r in rows
        )
        queue = sorted(r[0] for r in memory.store.fetchall("SELECT record_id FROM queue"))
        dreams = memory.store.fetchall("SELECT COUNT(*) FROM dreams")[0][0]
        active = len(memory.get_all(user_id="u1", limit=1000))
        vectors = memory.stats(user_id="u1")["vectors"]
        assert vectors == active, "FAISS out of step with SQLite after reopen"
        hits = memory.recall("Excel reports", user_id="u1", k=5)
        assert all(h.record.is_active for h in hits)
    return (tuple(records), tuple(queue), dreams)


_ORIGINAL_IDS: list[str] = []


def _run_child(path: Path, kill_after: float | None) -> float:
    """Run the child; kill it ``kill_after`` seconds after it is ready. Returns its run time."""
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path), DELAY],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline()
    assert line.strip() == "ready", f"child failed to start: {line!r}"
    start = time.perf_counter()
    if kill_after is None:
        assert child.wait(timeout=60) == 0
    else:
        time.sleep(kill_after)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=60)
    child.stdout.close()
    return time.perf_counter() - start


@pytest.mark.slow
def test_kill_at_random_points_never_leaves_half_a_dream(tmp_path: Path) -> None:
    template = tmp_path / "template"
    with DreamMemory(template, embedder=HashingEmbedder()) as memory:
        for day in range(3):
            seed(memory, turns=conversation(), start=T0 + timedelta(days=day))
        _ORIGINAL_IDS[:] = [r[0] for r in memory.store.fetchall("SELECT id FROM records")]
    old = _state(template)

    reference = tmp_path / "reference"
    shutil.copytree(template, reference)
    duration = _run_child(reference, None)
    new = _state(reference)
    assert new != old and new[1] == () and new[2] == 1

    rng = random.Random(20261130)
    outcomes = {"old": 0, "new": 0}
    # Kills spread over the reference run; then, since a loaded machine can slow the
    # killed runs down, later kills until one lands after the commit (bounded).
    delays = [duration * (n + rng.random()) / KILLS for n in range(KILLS)]
    late = [duration * factor for factor in (1.25, 1.6, 2.2, 3.5, 6.0)]
    for n, kill_after in enumerate([*delays, *late]):
        if n >= KILLS and outcomes["new"]:
            break
        work = tmp_path / f"kill-{n}"
        shutil.copytree(template, work)
        _run_child(work, kill_after)
        state = _state(work)
        assert state in (old, new), f"half a dream after a kill at {kill_after:.3f}s"
        outcomes["old" if state == old else "new"] += 1
        with DreamMemory(work, embedder=HashingEmbedder()) as memory:
            memory.dream(user_id="u1")
        assert _state(work) == new, f"re-run after a kill at {kill_after:.3f}s differs"
    assert outcomes["old"] > 0 and outcomes["new"] > 0, outcomes
