"""The CRUD half of the facade through its async twins gives what the sync methods give.

With ``tests/unit/test_async_parity.py`` (the write, read and dream methods) every
public sync method of the facade is called both ways; the last test checks that.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from dreammem import DreamMemory
from dreammem.crud import CrudMixin
from dreammem.embed import HashingEmbedder
from dreammem.layer_writes import LayerWriteMixin
from dreammem.lookups import LookupMixin

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
CALLED = {
    "update",
    "revert_update",
    "export",
    "import_",
    "purge",
    "forget_all",
}
"""The methods the session below calls (test_async_parity.py calls the others)."""
PARITY_SESSION = {
    "add",
    "add_many",
    "remember",
    "recall",
    "get",
    "get_all",
    "working_memory",
    "set_task_state",
    "task_state",
    "dream",
    "dreams",
    "undo_dream",
    "forget",
    "history",
    "stats",
    "reindex",
    "reindex_graph",
    "replay_graph",
    "end_task",
    "end_session",
    "maybe_dream",
    "close",
}


def _public_sync() -> set[str]:
    """Public sync methods of the facade and every mixin but the look-ups (no twins) and old names."""
    return {
        name
        for cls in DreamMemory.__mro__
        if cls not in (LookupMixin, LayerWriteMixin, object)  # the layers' reads and writes: no twins
        for name, member in vars(cls).items()
        if not name.startswith("_")
        and inspect.isfunction(member)
        and not inspect.iscoroutinefunction(member)
        and not hasattr(member, "__deprecated__")  # an old name kept one release (DeprecationWarning)
    }


def test_the_crud_methods_have_twins_with_their_signatures() -> None:
    crud = {
        n
        for n, m in vars(CrudMixin).items()
        if not n.startswith("_") and inspect.isfunction(m) and not hasattr(m, "__deprecated__")
    }
    crud = {n for n in crud if not inspect.iscoroutinefunction(getattr(CrudMixin, n))}
    assert CALLED - {"revert_update"} <= crud  # revert_update is the facade's own
    for name in crud:
        twin = getattr(DreamMemory, "a" + name)
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(DreamMemory, name)), name


def _session(memory: DreamMemory, other: DreamMemory, *, twin: bool) -> list[object]:
    async def call(name: str, *args: object, on: DreamMemory = memory, **kwargs: object) -> object:
        if twin:
            return await getattr(on, "a" + name)(*args, **kwargs)
        return getattr(on, name)(*args, **kwargs)

    async def run() -> list[object]:
        out: list[object] = []
        memory.add("I take my coffee with regular milk.", user_id="u1", event_time=T0)
        memory.add("It rained a lot this week.", user_id="u1", event_time=T0 + timedelta(days=1))
        memory.add("I switched to oat milk in my coffee.", user_id="u1", event_time=T0 + timedelta(days=7))
        boat = memory.add("The boat is called Sea Otter", user_id="u1", session_id="s2")
        old = next(r for r in memory.get_all(user_id="u1", status="superseded") if "regular" in r.content)
        edited = await call("update", boat.id, "The boat is called Sea Lion", user_id="u1")
        out.append((edited.content, edited.status.value))  # type: ignore[attr-defined]
        back = await call("revert_update", old.id, user_id="u1")
        out.append((back.content, back.status.value, back.superseded_by))  # type: ignore[attr-defined]
        exported = await call("export", user_id="u1")
        lines = str(exported).splitlines()
        rows = [json.loads(line) for line in lines[1:]]
        out.append([row["record"]["content"] for row in rows if "record" in row])
        imported = await call("import_", exported, user_id="u2", on=other)
        out.append((imported.imported, imported.skipped))  # type: ignore[attr-defined]
        dry = await call("purge", boat.id, user_id="u1", dry_run=True)
        erased = await call("purge", boat.id, user_id="u1")
        out.append((len(dry.purged), len(erased.purged), erased.dry_run))  # type: ignore[attr-defined]
        out.append(await call("forget_all", user_id="u2", on=other))
        out.append(sorted((r.content, r.status.value) for r in memory.get_all(user_id="u1", status=None)))
        return out

    with memory, other:
        return asyncio.run(run())


def test_the_crud_twins_give_equal_results(tmp_path: Path) -> None:
    stores = [DreamMemory(tmp_path / name, embedder=HashingEmbedder()) for name in ("s", "s2", "a", "a2")]
    sync = _session(stores[0], stores[1], twin=False)
    concurrent = _session(stores[2], stores[3], twin=True)
    assert sync == concurrent
    assert sync[0] == ("The boat is called Sea Lion", "active")
    assert sync[1][1] == "active" and sync[1][2] is None  # type: ignore[index]
    assert 0 < sync[5] < sync[3][0]  # type: ignore[index, operator]  # forget_all: the active ones


def test_every_public_method_is_called_both_ways_by_one_parity_test() -> None:
    assert _public_sync() == CALLED | PARITY_SESSION
