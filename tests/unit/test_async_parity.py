"""Every public facade method has an ``a``-twin with its signature, and both give equal results."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from dreammem import DreamMemory
from dreammem.dream.methods import DreamMethods
from dreammem.embed import HashingEmbedder

FACADE = (DreamMemory, DreamMethods)
"""The facade and its dream methods (the look-up mixin's reads have no twins)."""


def _members() -> dict[str, object]:
    """Public members but the old names kept one release (they raise a DeprecationWarning)."""
    return {
        name: member
        for cls in FACADE
        for name, member in vars(cls).items()
        if not hasattr(member, "__deprecated__")
    }


def _public_sync() -> list[str]:
    names = []
    for name, member in _members().items():
        if name.startswith("_") or not inspect.isfunction(member) or inspect.iscoroutinefunction(member):
            continue
        names.append(name)
    return sorted(names)


def test_every_public_method_has_a_twin_with_its_signature() -> None:
    names = _public_sync()
    assert {"add", "recall", "forget", "dream", "undo_dream", "reindex", "close"} <= set(names)
    for name in names:
        twin = getattr(DreamMemory, "a" + name)
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(getattr(DreamMemory, name)), name
    extra = {
        name[1:]
        for name, member in _members().items()
        if name.startswith("a") and inspect.iscoroutinefunction(member)
    }
    assert extra == set(names)


def _run(memory: DreamMemory, twin: bool) -> list[object]:
    """One scripted session through the sync methods or their twins; returns what each call gave."""

    async def call(name: str, *args: object, **kwargs: object) -> object:
        if twin:
            return await getattr(memory, "a" + name)(*args, **kwargs)
        return getattr(memory, name)(*args, **kwargs)

    async def session() -> list[object]:
        out: list[object] = []
        added = await call("add", "I moved to Lisbon in May", user_id="u1", session_id="s1")
        many = await call(
            "add_many",
            [
                {"content": "I prefer green tea", "user_id": "u1", "session_id": "s1"},
                {"content": "My dog is called Rex", "user_id": "u1", "session_id": "s1"},
            ],
        )
        pinned = await call("remember", "Allergic to peanuts", user_id="u1")
        out.append([r.content for r in [added, *many, pinned]])  # type: ignore[union-attr]
        hits = await call("recall", "where do I live?", user_id="u1", k=3)
        out.append([h.record.content for h in hits])  # type: ignore[attr-defined]
        out.append((await call("get", added.id, user_id="u1")).content)  # type: ignore[attr-defined]
        out.append([r.content for r in await call("get_all", user_id="u1")])  # type: ignore[attr-defined]
        out.append([r.content for r in await call("working_memory", user_id="u1", session_id="s1")])  # type: ignore[attr-defined]
        await call("set_task_state", {"goal": "plan a move"}, user_id="u1", session_id="s1")
        out.append(await call("task_state", user_id="u1", session_id="s1"))
        report = await call("dream", user_id="u1")
        out.append((report.queued, len(report.kept)))  # type: ignore[attr-defined]
        out.append(len(await call("dreams", user_id="u1")))  # type: ignore[arg-type]
        undone = await call("undo_dream", report.dream_id, user_id="u1")  # type: ignore[attr-defined]
        out.append(undone.requeued)  # type: ignore[attr-defined]
        gone = await call("forget", many[1].id, user_id="u1")  # type: ignore[index]
        out.append(gone.status.value)  # type: ignore[attr-defined]
        out.append([r.status.value for r in await call("history", many[1].id, user_id="u1")])  # type: ignore[index, attr-defined]
        stats = await call("stats", user_id="u1")
        out.append({k: v for k, v in stats.items() if k != "schema_version"})  # type: ignore[attr-defined]
        out.append(await call("reindex"))
        out.append(await call("reindex_graph"))
        out.append(await call("replay_graph"))
        out.append(len(await call("end_task", user_id="u1", session_id="s1", outcome="Moved", success=True)))  # type: ignore[arg-type]
        out.append(len(await call("end_session", user_id="u1", session_id="s1")))  # type: ignore[arg-type]
        out.append(len(await call("maybe_dream", "u1")))  # type: ignore[arg-type]
        await call("close")
        return out

    return asyncio.run(session())


def test_sync_and_async_give_equal_results(tmp_path: Path) -> None:
    sync = _run(DreamMemory(tmp_path / "sync", embedder=HashingEmbedder()), twin=False)
    concurrent = _run(DreamMemory(tmp_path / "async", embedder=HashingEmbedder()), twin=True)
    assert sync == concurrent
    assert sync[1] and sync[0][0] == "I moved to Lisbon in May"
