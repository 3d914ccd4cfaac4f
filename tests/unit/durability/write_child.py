"""Child process for the write-kill test: add batches, print an ack after each, until killed.

Usage: python write_child.py STORE_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder

BATCH = 5


def main() -> None:
    with DreamMemory(sys.argv[1], embedder=HashingEmbedder()) as memory:
        print("ready", flush=True)
        for i in range(10_000):
            turns = [
                {
                    "content": f"batch {i} turn {j}: notes on the museum visit",
                    "user_id": "u1",
                    "session_id": f"s{i}",
                }
                for j in range(BATCH)
            ]
            memory.add_many(turns)
            print(f"acked {i}", flush=True)


if __name__ == "__main__":
    main()
