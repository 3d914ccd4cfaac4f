"""A purge killed between its commit and its compaction leaves no purged byte once the store reopens.

The erasure commits with a mark that its compaction is pending; a child process is
SIGKILLed right after the commit (before SQLite compacts, or before FAISS is
rewritten). The purged words and embedding are then still in the files, as the
kill left them; the next open must finish the work, so that no file holds them; and
the purge, run again, must answer as a finished rerun, not "no such memory".
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from dreammem import DreamMemory, NotFoundError
from dreammem.embed import HashingEmbedder
from tests.erasure import files_holding
from tests.unit.test_purge import KEPT, SECRET, fill, vector_bytes, word_bytes

CHILD = Path(__file__).with_name("purge_child.py")
ROUNDS = 3


def _kill_after_commit(path: Path, memory_id: str, point: str) -> None:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(path), memory_id, point],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline().strip()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    child.stdout.close()
    assert line == "committed", f"the child did not reach the point after the commit: {line!r}"


@pytest.mark.slow
@pytest.mark.parametrize("point", ["compact", "apply"])
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_the_next_open_finishes_a_killed_purge(tmp_path: Path, point: str, round_: int) -> None:
    root = tmp_path / "s"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        for n in range(round_ * 20):  # stores of a few sizes
            memory.add(f"filler note {n} about the garden", user_id="u1", session_id=f"f{n}")
    needles = [*word_bytes(), vector_bytes(SECRET)]
    _kill_after_commit(root, secret, point)
    assert files_holding(root, needles), "the kill landed before the bytes could go"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        assert files_holding(root, needles) == []  # the open finished the compaction
        assert memory.get_all(user_id="u1", status=None, limit=1000)
        assert all(r.content != SECRET for r in memory.get_all(user_id="u1", status=None, limit=1000))
        rerun = memory.purge(secret, user_id="u1")  # a rerun finds nothing left to do
        assert rerun.purged == () and rerun.compacted
        assert memory.recall("Zylophant cheese", user_id="u1").hits[0].record.content == KEPT
        assert memory.stats(user_id="u1")["vectors"] == memory.stats(user_id="u1")["records"]["active"]
    assert files_holding(root, needles) == []


def test_a_rerun_answers_its_own_user_only(tmp_path: Path) -> None:
    """A purged id is kept as a digest of user and id: another user still gets NotFoundError."""
    root = tmp_path / "s"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        assert secret in memory.purge(secret, user_id="u1").purged
        again = memory.purge(secret, user_id="u1")
        assert again.purged == () and again.compacted
        assert memory.purge(secret, user_id="u1", dry_run=True).dry_run
        with pytest.raises(NotFoundError):
            memory.purge(secret, user_id="u2")
    assert files_holding(root, word_bytes()) == []
