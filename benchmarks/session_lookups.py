"""What a turn's session neighbours and a record's same-text twins cost to look up (issue 16).

Both lookups run on every recall (the reply path's neighbours) or every superseding write
(twins). One user's turns, in sessions of ``--per-session``, written with the hashing
embedder (the lookups never embed):

* ``--store sqlite``: ``session_neighbours`` of 20 random turns, per session length. Run it
  on two checkouts to compare versions of the query (``PYTHONPATH=<other checkout>``).
* ``--store neo4j``: on a running server, ``session_neighbours``, ``twins`` and a whole
  recall, each with the record indexes DreamMem creates and without them (dropped for the
  baseline, in turns, and created again at the end). The server keeps the user's records.

    HF_HUB_OFFLINE=1 python benchmarks/session_lookups.py --store sqlite --per-session 20 200 1000
    bash scripts/neo4j.sh up
    HF_HUB_OFFLINE=1 python benchmarks/session_lookups.py --store neo4j --uri "$(bash scripts/neo4j.sh uri)"
"""

from __future__ import annotations

import argparse
import functools
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.neo4j_store import Neo4jRecordStore
from dreammem.types import Kind, MemoryRecord

T = TypeVar("T")
T0 = datetime(2024, 1, 1, tzinfo=UTC)
NAMES = "Ana Ivan Mia Tom Ravi Nina Luis Paul".split()
THINGS = "piano tent kayak router camera watch guitar scooter laptop jacket".split()
INDEXES = {
    "dm_record_session": "(r.user_id, r.session_id)",
    "dm_record_content_head": "(r.user_id, r.content_head)",
}
"""The Neo4j record indexes the baseline goes without."""


def _fill(memory: DreamMemory, user: str, count: int, per_session: int) -> None:
    items = [
        {
            "content": f"{NAMES[i % 8]} talked about the {THINGS[i % 10]} and the {THINGS[i * 7 % 10]} "
            f"on day {i}",
            "user_id": user,
            "session_id": f"s{i // per_session}",
            "event_time": T0 + timedelta(minutes=i),
        }
        for i in range(count)
    ]
    for lo in range(0, count, 500):
        memory.add_many(items[lo : lo + 500])


def _ms(call: Callable[[T], object], inputs: Sequence[T]) -> float:
    """Median milliseconds of ``call`` over the inputs."""
    times = []
    for value in inputs:
        start = time.perf_counter()
        call(value)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _seeds(memory: DreamMemory, user: str) -> list[list[int]]:
    """Twenty random turns' row ids per call, the same for every configuration."""
    records = memory.store.find(user, kinds=[Kind.TURN], limit=100_000)
    rowids = list(memory.store.rowids(user, [r.id for r in records]).values())
    rng = random.Random(7)
    return [rng.sample(rowids, 20) for _ in range(50)]


def _sqlite(sizes: list[int], count: int) -> None:
    for per_session in sizes:
        with (
            tempfile.TemporaryDirectory() as folder,
            DreamMemory(Path(folder), embedder=HashingEmbedder()) as memory,
        ):
            _fill(memory, "u", count, per_session)
            took = _ms(functools.partial(memory.store.session_neighbours, "u"), _seeds(memory, "u") * 4)
            print(
                f"sqlite, {count} turns, {per_session} a session: 20 turns' neighbours {took * 1000:.0f} µs"
            )


def _neo4j(uri: str, count: int, per_session: int, rounds: int) -> None:
    user = f"bench-{uuid.uuid4().hex[:8]}"
    with DreamMemory(uri, embedder=HashingEmbedder()) as memory:
        _fill(memory, user, count, per_session)
        store = memory.store
        if not isinstance(store, Neo4jRecordStore):
            raise SystemExit(f"{uri} did not open a Neo4j store")
        client = store.client
        seeds = _seeds(memory, user)
        turns: list[MemoryRecord] = store.find(user, limit=200)
        questions = [f"what did {n} say about the {t}?" for n in NAMES for t in THINGS]
        now = T0 + timedelta(days=30)
        results: dict[str, dict[str, list[float]]] = {"with": {}, "without": {}}
        try:
            for n in range(2 * rounds):
                side = "with" if n % 2 == 0 else "without"
                for name, properties in INDEXES.items():
                    statement = (
                        f"CREATE INDEX {name} IF NOT EXISTS FOR (r:DMRecord) ON {properties}"
                        if side == "with"
                        else f"DROP INDEX {name} IF EXISTS"
                    )
                    client.schema((statement, "CALL db.awaitIndexes(300)"))
                found = results[side]
                found.setdefault("session_neighbours (20 turns)", []).append(
                    _ms(functools.partial(store.session_neighbours, user), seeds)
                )
                found.setdefault("twins (one record)", []).append(_ms(store.twins, turns))
                found.setdefault("recall (k = 5)", []).append(
                    _ms(lambda text: memory.recall(text, user_id=user, k=5, now=now), questions)
                )
        finally:
            for name, properties in INDEXES.items():
                client.schema((f"CREATE INDEX {name} IF NOT EXISTS FOR (r:DMRecord) ON {properties}",))
        print(f"neo4j, {count} turns of one user, {per_session} a session: median ms, one per round")
        for what in results["with"]:
            with_index = ", ".join(f"{v:.1f}" for v in results["with"][what])
            without = ", ".join(f"{v:.1f}" for v in results["without"][what])
            print(f"  {what:32s} with the indexes {with_index:24s} without {without}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", choices=("sqlite", "neo4j"), required=True)
    parser.add_argument("--uri", help="bolt:// URI of the server (--store neo4j)")
    parser.add_argument("--turns", type=int, default=4000)
    parser.add_argument("--per-session", type=int, nargs="+", default=[20])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    if args.store == "sqlite":
        _sqlite(args.per_session, args.turns)
    elif args.uri is None:
        parser.error("--store neo4j needs --uri")
    else:
        _neo4j(args.uri, args.turns, args.per_session[0], args.rounds)


if __name__ == "__main__":
    main()
