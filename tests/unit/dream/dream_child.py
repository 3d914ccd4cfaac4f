"""Child process for the kill test: open a store, dream once, close. Killed at random points.

Usage: python dream_child.py STORE_DIR WRITE_DELAY_SECONDS
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.sqlite import SQLiteRecordStore


def _slowed(name: str, delay: float) -> None:
    original = getattr(SQLiteRecordStore, name)

    def slow(self: SQLiteRecordStore, *args: Any, **kwargs: Any) -> Any:
        time.sleep(delay)  # stretch the dream so that kills land all through it
        return original(self, *args, **kwargs)

    setattr(SQLiteRecordStore, name, slow)


def main() -> None:
    path, delay = sys.argv[1], float(sys.argv[2])
    for name in ("insert", "update", "dequeue", "put_vectors", "queued", "find"):
        _slowed(name, delay)
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        print("ready", flush=True)
        memory.dream(user_id="u1")
        print("dreamt", flush=True)
    print("closed", flush=True)


if __name__ == "__main__":
    main()
