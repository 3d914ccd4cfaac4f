"""Kill the Neo4j server mid-load: writers keep writing, nothing acknowledged is lost (issue 13).

Several writer processes open ``DreamMemory(uri)`` and write turns (one or three a
call) through :func:`dreammem.agent_api.ingest_turns`, each turn with a unique
message id, on a user of their own and one user every writer shares. After each
call that returned, the writer appends the turns' markers to its own file: those
turns are *acknowledged*. A call that fails with a retryable
:class:`~dreammem.errors.BackendError` is retried with the same message ids (the
write is idempotent, so a commit whose answer the crash swallowed is not stored
twice) until it returns or the run's deadline passes.

Once ``before`` turns are acknowledged the server is killed (SIGKILL: no clean
shutdown) and restarted on the same data; the run goes on until every writer has
had ``after`` turns acknowledged since the restart. The audit opens the store
afresh and counts:

* **lost**: acknowledged turns missing from the store;
* **duplicated**: acknowledged turns stored more than once;
* **cross-user**: turns stored under another user than the one they were written
  for, plus recall hits (recalls run between writes) of another user;
* **untyped**: exceptions a writer saw that are not DreamMem's typed errors.

The embedder is the hashing one: this measures the store, not a model.
"""

from __future__ import annotations

import json
import multiprocessing
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.process import BaseProcess
from pathlib import Path

from dreammem.agent_api import ChatTurn, ingest_turns
from dreammem.config import DreamMemConfig, Neo4jStoreConfig
from dreammem.embed import HashingEmbedder
from dreammem.errors import BackendError, DreamMemError
from dreammem.memory import DreamMemory
from dreammem.types import Kind

__all__ = ["OutageReport", "run_outage", "writer"]

_WORDS = "kayak fjord glacier tea passport violin lantern harbour orchard canyon".split()
_POLL = 0.1
_RETRY_PAUSE = 0.2


@dataclass(frozen=True)
class OutageReport:
    """The audit of one outage run (see the module docstring)."""

    writers: int
    acknowledged: int
    acknowledged_after_restart: int
    lost: int
    duplicated: int
    cross_user: int
    untyped: list[str]
    typed_errors: int
    """Retryable typed errors the writers saw (and retried)."""
    failures: int
    """Calls given up on: a non-retryable typed error, or the deadline."""
    already_stored: int
    """Retried calls whose turns the store already held (a commit the crash left unanswered)."""
    outage_s: float
    """From the kill until the restarted server answered."""
    recover_s: float
    """From the restarted server answering until every writer had a write acknowledged again."""
    seconds: float


@dataclass
class _Tally:
    """What one writer saw, besides its acknowledged turns."""

    typed_errors: int = 0
    failures: int = 0
    already_stored: int = 0
    cross_user: int = 0
    untyped: list[str] = field(default_factory=list)


def _acks(folder: Path) -> list[tuple[str, str, float]]:
    """Every acknowledged (marker, user, wall-clock time) the writers logged so far."""
    rows: list[tuple[str, str, float]] = []
    for path in sorted(folder.glob("acks-*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split("\t")
            if len(parts) == 3:  # a line still being written is left for the next look
                rows.append((parts[0], parts[1], float(parts[2])))
    return rows


def _write(
    memory: DreamMemory, turns: list[ChatTurn], user: str, session: str, tally: _Tally, deadline: float
) -> bool:
    """One idempotent write, retried while the store says a retry may help; True once acknowledged."""
    retried = False
    while time.time() < deadline:
        try:
            stored = ingest_turns(memory, turns, user_id=user, session_id=session)
        except BackendError as exc:
            if not exc.is_retryable:
                tally.failures += 1
                return False
            tally.typed_errors += 1
            retried = True
            time.sleep(_RETRY_PAUSE)
            continue
        except DreamMemError:
            tally.failures += 1
            return False
        except Exception as exc:  # the audit reports it: only typed errors may escape
            tally.untyped.append(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"[:300])
            time.sleep(_RETRY_PAUSE)
            continue
        if retried and len(stored) < len(turns):
            tally.already_stored += 1
        return True
    tally.failures += 1
    return False


def _recall(memory: DreamMemory, user: str, rng: random.Random, tally: _Tally) -> None:
    try:
        result = memory.recall(rng.choice(_WORDS), user_id=user, k=5)
    except DreamMemError:
        return  # a recall may fail (typed) or degrade while the server is down
    except Exception as exc:
        tally.untyped.append(f"{type(exc).__module__}.{type(exc).__qualname__}: {exc}"[:300])
        return
    tally.cross_user += sum(hit.record.user_id != user for hit in result.hits)


def writer(uri: str, number: int, seed: int, folder: str, deadline: float) -> None:
    """One writer process (see the module docstring); stops when ``folder/stop`` exists."""
    rng = random.Random(seed * 1000 + number)
    users = [f"k{number}-{seed}", f"kshared-{seed}"]
    session = f"s{number}"
    base = Path(folder)
    tally = _Tally()
    config = DreamMemConfig(store=Neo4jStoreConfig(timeout=2.0))
    with (
        DreamMemory(uri, config=config, embedder=HashingEmbedder()) as memory,
        (base / f"acks-{number}.tsv").open("a", encoding="utf-8") as acks,
    ):
        n = 0
        while not (base / "stop").exists() and time.time() < deadline:
            user = users[n % 2]
            markers = [f"m{seed}x{number}x{n}x{k}" for k in range(3 if n % 3 == 0 else 1)]
            turns = [
                ChatTurn("user", f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} note {m}", message_id=m)
                for m in markers
            ]
            if _write(memory, turns, user, session, tally, deadline):
                now = time.time()
                acks.write("".join(f"{m}\t{user}\t{now}\n" for m in markers))
                acks.flush()
            if n % 4 == 3:
                _recall(memory, user, rng, tally)
            n += 1
    (base / f"tally-{number}.json").write_text(json.dumps(tally.__dict__), encoding="utf-8")


def _wait(condition: Callable[[], bool], procs: Sequence[BaseProcess], deadline: float, what: str) -> None:
    while not condition():
        dead = [proc.name for proc in procs if proc.exitcode is not None]
        if dead:
            raise RuntimeError(f"outage run: writers {dead} exited early (see their stderr)")
        if time.time() > deadline:
            raise TimeoutError(f"outage run: {what} not reached before the deadline")
        time.sleep(_POLL)


def _audit(uri: str, acks: list[tuple[str, str, float]]) -> tuple[int, int, int]:
    """(lost, duplicated, stored under another user) of the acknowledged turns."""
    owner = {marker: user for marker, user, _ in acks}
    found: dict[str, list[str]] = {}
    with DreamMemory(uri, embedder=HashingEmbedder()) as memory:
        for user in sorted(set(owner.values())):
            for record in memory.store.find(user, statuses=None, kinds=[Kind.TURN]):
                marker = record.content.split(" note ", 1)[-1]
                found.setdefault(marker, []).append(record.user_id)
    lost = sum(marker not in found for marker in owner)
    duplicated = sum(len(found.get(marker, ())) > 1 for marker in owner)
    crossed = sum(any(u != owner[m] for u in found.get(m, ())) for m in owner)
    return lost, duplicated, crossed


def run_outage(
    uri: str,
    *,
    kill: Callable[[], None],
    restart: Callable[[], None],
    folder: Path,
    writers: int = 3,
    before: int = 30,
    after: int = 5,
    seed: int = 0,
    limit_s: float = 300.0,
) -> OutageReport:
    """Write from ``writers`` processes, ``kill`` and ``restart`` the server mid-load, then audit.

    Args:
        uri: The server's Bolt URI (the same after the restart).
        kill: Kills the server (SIGKILL), keeping its data.
        restart: Starts it again on the same data and port; returns once it answers.
        folder: An empty folder for the writers' acknowledgement logs.
        writers: Writer processes.
        before: Acknowledged turns (all writers) before the kill.
        after: Acknowledged turns per writer after the restart before the run stops.
        seed: Makes users and markers unique to this run.
        limit_s: Bound on the whole run.

    Raises:
        TimeoutError: a stage was not reached within ``limit_s``.
    """
    folder.mkdir(parents=True, exist_ok=True)
    start = time.time()
    deadline = start + limit_s
    context = multiprocessing.get_context("spawn")
    procs = [
        context.Process(target=writer, args=(uri, n, seed, str(folder), deadline), daemon=True)
        for n in range(writers)
    ]
    for proc in procs:
        proc.start()
    try:
        _wait(lambda: len(_acks(folder)) >= before, procs, deadline, f"{before} acknowledged turns")
        killed = time.time()
        kill()
        restart()
        ready = time.time()

        def caught_up() -> bool:
            per_writer = [0] * writers
            for marker, _, when in _acks(folder):
                if when > ready:
                    per_writer[int(marker.split("x")[1])] += 1
            return min(per_writer) >= after

        _wait(caught_up, procs, deadline, f"{after} acknowledged turns per writer after the restart")
    finally:
        (folder / "stop").touch()
        for proc in procs:
            proc.join(timeout=max(5.0, deadline - time.time()))
    acks = _acks(folder)
    tallies = [_Tally(**json.loads(p.read_text(encoding="utf-8"))) for p in folder.glob("tally-*.json")]
    if len(tallies) != writers:
        raise RuntimeError(f"only {len(tallies)} of {writers} writers finished (see their stderr)")
    first_after: dict[str, float] = {}
    for marker, _, when in sorted(acks, key=lambda row: row[2]):
        if when > ready:
            first_after.setdefault(marker.split("x")[1], when)
    lost, duplicated, crossed = _audit(uri, acks)
    return OutageReport(
        writers=writers,
        acknowledged=len(acks),
        acknowledged_after_restart=sum(when > ready for _, _, when in acks),
        lost=lost,
        duplicated=duplicated,
        cross_user=crossed + sum(t.cross_user for t in tallies),
        untyped=[u for t in tallies for u in t.untyped],
        typed_errors=sum(t.typed_errors for t in tallies),
        failures=sum(t.failures for t in tallies),
        already_stored=sum(t.already_stored for t in tallies),
        outage_s=round(ready - killed, 1),
        recover_s=round(max(first_after.values()) - ready, 1),
        seconds=round(time.time() - start, 1),
    )
