"""What keeping a long-lived process's FAISS index current costs (issue 13).

A reader holds the store open (SQLite connection + FAISS index + VectorSync, as
``DreamMemory`` does); a second connection writes, as another process would. Measured:

* the per-call check when nobody wrote (``PRAGMA data_version``), every recall pays it;
* the incremental refresh after N new rows and after N forgets by the other connection,
  and after N rows this process wrote itself plus one foreign row (its own rows are
  in the log too; they are found held with the same vector and left alone);
* the baselines in the same run: a full rebuild from SQLite (what the refresh avoids)
  and reopening the store (what a user had to do before).

    HF_HUB_OFFLINE=1 python benchmarks/multiprocess_refresh.py --sizes 10000 100000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores import vector_log
from dreammem.stores.faiss_index import FaissVectorIndex
from dreammem.stores.sqlite import SQLiteRecordStore
from dreammem.stores.vector_sync import VectorSync

DIM = 384  # MiniLM's dimension; the hashing embedder keeps the write side cheap
USER = "u1"


def _turns(start: int, count: int) -> list[dict[str, str]]:
    return [
        {"content": f"note {i} on topic {i % 97} item{i}", "user_id": USER}
        for i in range(start, start + count)
    ]


def _ms(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return (time.perf_counter() - start) * 1000


def run(size: int, news: list[int], checks: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder)
        writer = DreamMemory(path, embedder=HashingEmbedder(DIM))
        for start in range(0, size, 2000):
            writer.add_many(_turns(start, min(2000, size - start)))
        store = SQLiteRecordStore(path / "dreammem.db")
        index = FaissVectorIndex(DIM, path / "vectors.faiss")
        sync = VectorSync(store, index, writer.embedder.name)
        open_ms = _ms(sync.load)
        sync.refresh()
        samples = []
        for _ in range(checks):
            began = time.perf_counter()
            sync.refresh()
            samples.append((time.perf_counter() - began) * 1e6)
        print(f"\n## {size:,} vectors in the store")
        print(
            f"reader open (file + log): {open_ms:.1f} ms; full rebuild (baseline): {_ms(sync.rebuild):.1f} ms"
        )
        print(
            f"check, nobody wrote: p50 {statistics.median(samples):.1f} us, "
            f"p95 {sorted(samples)[int(0.95 * len(samples))]:.1f} us ({checks} calls)"
        )
        mine = DreamMemory(path, embedder=HashingEmbedder(DIM))  # the reader's own writes
        print(
            "| N | refresh after N new rows | after N forgets | after N own + 1 new | reopen (baseline) |"
        )  # medians
        print("|---:|---:|---:|---:|---:|")
        written = size
        for n in news:
            times: dict[str, list[float]] = {"added": [], "forgot": [], "mixed": [], "reopen": []}
            for _ in range(rounds):
                records = writer.add_many(_turns(written, n))
                written += n
                times["added"].append(_ms(sync.refresh))
                assert index.count(USER) == written
                for record in records:
                    writer.forget(record.id, user_id=USER, twins=False)
                times["forgot"].append(_ms(sync.refresh))
                written -= n
                assert index.count(USER) == written
                own = mine.add_many(_turns(10**7 + written, n))
                # As the reader's own unit of work would: its index got them at commit already.
                rowids = list(store.rowids(USER, [r.id for r in own]).values())
                stored, _ = vector_log.current_vectors(store, rowids, writer.embedder.name, DIM)
                index.add(USER, *stored[USER])
                writer.add(f"one more note {written}", user_id=USER)
                written += n + 1
                times["mixed"].append(_ms(sync.refresh))
                assert index.count(USER) == written
                reopened = VectorSync(
                    store, FaissVectorIndex(DIM, path / "vectors.faiss"), writer.embedder.name
                )
                times["reopen"].append(_ms(reopened.load))
            cells = " | ".join(f"{statistics.median(times[key]):.1f} ms" for key in times)
            print(f"| {n:,} | {cells} |")
        store.close()
        mine.close()
        writer.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--new", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--checks", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5, help="median of this many runs per cell")
    args = parser.parse_args()
    for size in args.sizes:
        run(size, args.new, args.checks, args.rounds)


if __name__ == "__main__":
    main()
