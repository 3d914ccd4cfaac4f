"""Child process for the purge-kill test: purge, and stop dead at one point after the commit.

Usage: python purge_child.py STORE_DIR MEMORY_ID POINT

The fault-injection seam is this script, not the library: before the purge it
replaces one step that runs after the erasure's commit with a function that prints
``committed`` and sleeps, so the parent's SIGKILL lands exactly there.

* ``compact``: the record store's ``compact`` (SQLite would rewrite its file);
* ``apply``: the unit of work's ``apply`` (FAISS would be rewritten without the vector).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.engine import UnitOfWork


def _stall(*_: Any, **__: Any) -> None:
    print("committed", flush=True)
    time.sleep(600)


def main() -> None:
    path, memory_id, point = sys.argv[1:4]
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.recall("anything", user_id="u1")  # FAISS open, as in a live process
        if point == "compact":
            memory.store.compact = _stall  # type: ignore[method-assign]
        else:
            UnitOfWork.apply = _stall  # type: ignore[method-assign]
        memory.purge(memory_id, user_id="u1")
        print("finished", flush=True)


if __name__ == "__main__":
    main()
