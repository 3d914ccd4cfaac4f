"""How often N processes opening one new SQLite store at once fail (issue 13, part A).

Each round starts N spawned processes on a fresh directory behind a barrier; each
opens ``SQLiteRecordStore`` (pragmas + migrations) and closes it. Prints the rounds
in which any process failed, and the first error of each.

    HF_HUB_OFFLINE=1 python benchmarks/first_open_race.py --rounds 15 --processes 6
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import tempfile
from pathlib import Path
from typing import Any

from dreammem.stores.sqlite import SQLiteRecordStore


def _open_once(path: str, barrier: Any, results: Any) -> None:
    try:
        barrier.wait(60)
        SQLiteRecordStore(Path(path) / "dreammem.db").close()
    except Exception as exc:  # reported to the parent, which counts it
        results.put(f"{type(exc).__name__}: {exc}")
        return
    results.put("ok")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--processes", type=int, default=6)
    args = parser.parse_args()
    spawn = mp.get_context("spawn")
    failed = 0
    for round_no in range(args.rounds):
        directory = tempfile.mkdtemp(prefix="dreammem-race-")
        barrier, results = spawn.Barrier(args.processes), spawn.Queue()
        workers = [
            spawn.Process(target=_open_once, args=(directory, barrier, results))
            for _ in range(args.processes)
        ]
        for worker in workers:
            worker.start()
        outcomes = [results.get(timeout=120) for _ in workers]
        for worker in workers:
            worker.join(timeout=60)
        errors = [o for o in outcomes if o != "ok"]
        if errors:
            failed += 1
            print(f"round {round_no}: {len(errors)} of {args.processes} failed: {errors[0]}")
    print(f"rounds with a failed open: {failed} of {args.rounds} ({args.processes} processes each)")


if __name__ == "__main__":
    main()
