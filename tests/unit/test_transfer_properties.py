"""Export then import gives back the same memory, whatever was done to it first.

Generated histories (turns in odd Unicode, core memories, edits, forgets, dreams, task
states) are exported, imported into an empty store and exported again: records with
every field, queue flags and task states come back equal, and the second export is
the first one.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder

T0 = datetime(2025, 11, 3, 7, 30, tzinfo=UTC)
WORDS = [*"budget Lisbon 价格 café naïve 🧠 Ω O'Brien".split(), '"quoted"', "a\tb", "x" * 30, "4200 EUR"]
text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)
op = st.one_of(
    st.tuples(st.just("add"), text, st.sampled_from(["user", "assistant", "tool"]), st.integers(0, 900)),
    st.tuples(st.just("remember"), text, st.booleans(), st.integers(0, 900)),
    st.tuples(st.just("update"), text, st.integers(0, 50), st.integers(0, 0)),
    st.tuples(st.just("forget"), st.just(""), st.integers(0, 50), st.integers(0, 0)),
    st.tuples(st.just("dream"), st.just(""), st.integers(1, 2), st.integers(0, 0)),
    st.tuples(st.just("task"), text, st.integers(0, 2), st.integers(0, 0)),
)


def _play(memory: DreamMemory, ops: list[tuple[str, str, Any, int]]) -> None:
    for kind, content, arg, minutes in ops:
        active = [r.id for r in memory.get_all(user_id="u1", limit=1000)]
        if kind == "add":
            memory.add(
                content, user_id="u1", role=arg, session_id="s1", event_time=T0 + timedelta(minutes=minutes)
            )
        elif kind == "remember":
            memory.remember(content, user_id="u1", pinned=arg, metadata={"n": minutes, "tags": [content[:5]]})
        elif kind == "update" and active:
            memory.update(active[arg % len(active)], content, user_id="u1")
        elif kind == "forget" and active:
            memory.forget(active[arg % len(active)], user_id="u1")
        elif kind == "dream":
            memory.dream(user_id="u1", level=arg)
        elif kind == "task":
            memory.set_task_state({"goal": content, "step": arg}, user_id="u1", session_id=f"s{arg}")


def _body(export: str) -> list[Any]:
    """The export without its header line (which holds the time of the export)."""
    return [json.loads(line) for line in export.splitlines()[1:]]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(ops=st.lists(op, min_size=1, max_size=12))
def test_export_import_export_is_the_identity(ops: list[tuple[str, str, Any, int]]) -> None:
    with (
        DreamMemory(None, embedder=HashingEmbedder()) as source,
        DreamMemory(None, embedder=HashingEmbedder()) as copy,
    ):
        _play(source, ops)
        first = source.export(user_id="u1")
        result = copy.import_(first, user_id="u1")
        assert result.skipped == 0
        assert result.imported == len(source.get_all(user_id="u1", status=None, limit=5000))
        assert _body(copy.export(user_id="u1")) == _body(first)
        originals = source.get_all(user_id="u1", status=None, limit=5000)
        assert list(copy.get_all(user_id="u1", status=None, limit=5000)) == list(originals)
        assert {r.id for r in copy.store.queued("u1")} == {r.id for r in source.store.queued("u1")}
        again = copy.import_(first, user_id="u1")  # an interrupted import can be run again
        assert (again.imported, again.skipped) == (0, result.imported)
