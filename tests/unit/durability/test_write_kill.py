"""Acknowledged writes survive SIGKILL, and a batch is all or nothing.

A child process writes batches of turns with ``add_many`` and prints an ack after each
call returns; it is SIGKILLed after a random number of acks (and at a random moment
inside the next batch). Reopened, the store must hold every acknowledged batch, no
batch in part, and a FAISS index in step with SQLite.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from tests.unit.durability.write_child import BATCH

CHILD = Path(__file__).with_name("write_child.py")
KILLS = 4


def _kill_after_acks(path: Path, acks: int, jitter: float) -> int:
    """Run the child until ``acks`` acknowledgements, then kill it; returns the last ack seen."""
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    last = -1
    while last < acks - 1:
        line = child.stdout.readline()
        assert line, "the child died on its own"
        last = int(line.split()[1])
    time.sleep(jitter)  # land the kill somewhere inside the next batch
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    for line in child.stdout:  # acks printed before the kill landed count too
        if line.startswith("acked"):
            last = int(line.split()[1])
    child.stdout.close()
    return last


@pytest.mark.slow
def test_sigkill_during_writes_keeps_every_acknowledged_batch_whole(tmp_path: Path) -> None:
    rng = random.Random(7)
    for kill in range(KILLS):
        path = tmp_path / f"store{kill}"
        last_ack = _kill_after_acks(path, acks=rng.randint(1, 6), jitter=rng.uniform(0, 0.05))
        with DreamMemory(path, embedder=HashingEmbedder()) as memory:
            records = memory.get_all(user_id="u1", status=None, limit=1000)
            batches: dict[int, int] = {}
            for record in records:
                match = re.match(r"batch (\d+) turn", record.content)
                assert match, record.content
                batches[int(match.group(1))] = batches.get(int(match.group(1)), 0) + 1
            assert all(count == BATCH for count in batches.values()), f"a batch in part: {batches}"
            assert set(range(last_ack + 1)) <= set(batches), f"acked {last_ack}, stored {sorted(batches)}"
            assert memory.stats(user_id="u1")["vectors"] == len(records)
            hits = memory.recall(f"batch {last_ack} museum", user_id="u1", k=3, paths=["keyword"])
            assert hits.hits and all(h.record.is_active for h in hits)
