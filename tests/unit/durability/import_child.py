"""Child process for the import-kill test: import an export file, print ``done``, until killed.

Usage: python import_child.py STORE_DIR EXPORT_FILE
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder


def main() -> None:
    with DreamMemory(sys.argv[1], embedder=HashingEmbedder()) as memory:
        memory.stats()  # the store is open and its model claimed before the clock starts
        print("ready", flush=True)
        result = memory.import_(Path(sys.argv[2]), user_id="u1")
        print(f"done {result.imported}", flush=True)


if __name__ == "__main__":
    main()
