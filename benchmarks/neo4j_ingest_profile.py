"""Profile one ``add_many`` on Neo4j: statements per action, their time, and Bolt round trips.

Grows one user to ``--size`` records with the bench's synthetic turns (``add_many`` of 250,
hashing vectors), then writes ``--batch`` more in one ``add_many`` and reports every
statement the store ran for it, by the action name :class:`Neo4jClient` gives it (those
run outside the write's transaction marked ``(auto)``), with the server's own time of the
statements in the transaction (the driver's ``result_available_after`` plus
``result_consumed_after``; the rest of a statement's time is the network, the driver's
packing and the worker thread), the commit, and the round trips counted on the driver's
sockets (a write followed by a read on one socket, as ``tests/bolt_trips.py``).
Needs a running server and a user that has no records there (``--prefix``)::

    NEO4J_PORT=auto NEO4J_STATE_DIR=/tmp/profile bash scripts/neo4j.sh up
    HF_HUB_OFFLINE=1 python benchmarks/neo4j_ingest_profile.py bolt://127.0.0.1:PORT --size 1000
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from neo4j import Transaction
from neo4j._async_compat.network import BoltSocketBase

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.stores.neo4j_client import Neo4jClient
from dreammem_bench.latency import synthetic_turns


class Profile:
    """Statements by action (count, seconds) and round trips, while ``on``."""

    def __init__(self) -> None:
        self.on = False
        self.trips = 0
        self.statements: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
        self._wrote: set[int] = set()

    def install(self) -> None:
        """Wrap the client's statements and the driver's sockets (this process only)."""
        within: Callable[..., Any] = Neo4jClient.within
        run: Callable[..., Any] = Neo4jClient.run
        commit: Callable[..., Any] = Transaction.commit
        send: Callable[..., Any] = BoltSocketBase.sendall
        receive: Callable[..., Any] = BoltSocketBase.recv_into
        profile = self

        def timed_within(client: Neo4jClient, action: str, work: Any) -> Any:
            start = time.perf_counter()
            try:
                return within(client, action, work)
            finally:
                profile.count(action, start)

        def timed_run(client: Neo4jClient, action: str, cypher: str, /, **params: Any) -> Any:
            start, alone = time.perf_counter(), client.current() is None
            if not alone:
                return client.within(action, lambda tx: profile.served(action, tx.run(cypher, params)))
            try:
                return run(client, action, cypher, **params)
            finally:
                profile.count(f"(auto) {action}", start)

        def timed_commit(tx: Transaction) -> None:
            start = time.perf_counter()
            try:
                commit(tx)
            finally:
                profile.count("(commit)", start)

        def sendall(sock: BoltSocketBase, data: Any) -> Any:
            profile._wrote.add(id(sock))
            return send(sock, data)

        def recv_into(sock: BoltSocketBase, *args: Any, **kwargs: Any) -> Any:
            if id(sock) in profile._wrote:
                profile._wrote.discard(id(sock))
                profile.trips += profile.on
            return receive(sock, *args, **kwargs)

        Neo4jClient.within = timed_within  # type: ignore[method-assign,assignment]
        Neo4jClient.run = timed_run  # type: ignore[method-assign]
        Transaction.commit = timed_commit  # type: ignore[method-assign,assignment]
        BoltSocketBase.sendall = sendall  # type: ignore[method-assign]
        BoltSocketBase.recv_into = recv_into  # type: ignore[method-assign,assignment]

    def served(self, action: str, result: Any) -> list[Any]:
        """The rows of a result; the server's time for it is added to ``action``'s."""
        rows = list(result)
        summary = result.consume()
        if self.on:
            done = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            self.statements[action][2] += done / 1000
        return rows

    def count(self, action: str, start: float) -> None:
        if self.on:
            entry = self.statements[action]
            entry[0] += 1
            entry[1] += time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("uri")
    parser.add_argument("--size", type=int, default=1000, help="records of the user before the batch")
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--prefix", default="profile-", help="before the bench's user id")
    parser.add_argument("--batches", type=int, default=1, help="add_many calls profiled, one after another")
    args = parser.parse_args()
    total = args.size + args.batch * args.batches
    plan = [{**t, "user_id": args.prefix + t["user_id"]} for t in synthetic_turns(total, 1)]
    profile = Profile()
    profile.install()
    with DreamMemory(args.uri, embedder=HashingEmbedder(dim=384)) as memory:
        for first in range(0, args.size, 250):
            memory.add_many(plan[first : min(args.size, first + 250)])
        profile.on = True
        start = time.perf_counter()
        for first in range(args.size, total, args.batch):
            memory.add_many(plan[first : first + args.batch])
        wall = time.perf_counter() - start
        profile.on = False
    print(
        f"{args.batches} add_many of {args.batch} turns from {args.size} records: {wall * 1000:.0f} ms, "
        f"{args.batch * args.batches / wall:.1f} turns/s, {profile.trips} round trips"
    )
    rows = sorted(profile.statements.items(), key=lambda item: -item[1][1])
    print(f"{'statement':32} {'count':>6} {'ms':>9} {'server ms':>10}")
    for action, (count, seconds, served) in rows:
        print(f"{action:32} {int(count):6d} {seconds * 1000:9.1f} {served * 1000:10.1f}")
    counted = [(c, s) for a, (c, s, _) in profile.statements.items() if a != "(commit)"]
    spent = sum(s for _, s, _ in profile.statements.values())
    print(
        f"{'all statements':32} {int(sum(c for c, _ in counted)):6d} {sum(s for _, s in counted) * 1000:9.1f}"
    )
    print(f"{'outside statements and commit':32} {'':6} {(wall - spent) * 1000:9.1f}")


if __name__ == "__main__":
    main()
