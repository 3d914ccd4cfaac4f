"""What the CRUD calls of issue 14 cost on a store of N memories (one user).

Measured, each beside its baseline in the same run:

* ``update`` (re-embed, keyword text, FAISS, graph, history version) against ``forget``
  (a status change, the cheapest write);
* ``purge`` of one memory (erase + FTS merge + VACUUM + WAL truncate + FAISS rebuild)
  against ``forget`` of one memory;
* ``export`` and ``import_`` into a fresh store, against ``add_many`` of the same turns.

The hashing embedder keeps embedding out of the numbers (a real model adds its own
cost per updated or imported text).

    HF_HUB_OFFLINE=1 python benchmarks/crud_cost.py --sizes 1000 10000
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder

USER = "u1"


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def turns(n: int) -> list[dict[str, object]]:
    return [
        {
            "content": f"Turn {i}: the crate {i % 97} went to dock {i % 13}",
            "user_id": USER,
            "session_id": f"s{i // 20}",
        }
        for i in range(n)
    ]


def run(size: int, root: Path) -> dict[str, float]:
    data = turns(size)
    out: dict[str, float] = {}
    with DreamMemory(root / f"a{size}", embedder=HashingEmbedder()) as memory:
        out["add_many"] = timed(lambda: memory.add_many(data))
        ids = [r.id for r in memory.get_all(user_id=USER, limit=10)]
        out["forget (baseline)"] = timed(lambda: memory.forget(ids[0], user_id=USER))
        out["update"] = timed(
            lambda: memory.update(ids[1], "The crate went to dock 99 instead", user_id=USER)
        )
        out["purge one"] = timed(lambda: memory.purge(ids[2], user_id=USER))
        text = ""

        def export() -> None:
            nonlocal text
            text = memory.export(user_id=USER)

        out["export"] = timed(export)
    with DreamMemory(root / f"b{size}", embedder=HashingEmbedder()) as fresh:
        out["import_"] = timed(lambda: fresh.import_(text, user_id=USER))
        assert fresh.export(user_id=USER) == text
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            for name, seconds in run(size, Path(tmp)).items():
                print(f"N={size:>7,}  {name:<18} {seconds * 1000:10.1f} ms")


if __name__ == "__main__":
    main()
