"""Metadata and task state are held to the content limit: whatever is written can be exported and imported.

A record's line in an export holds its content and metadata; the import refuses a
line longer than any record can be. Without a bound on metadata, a record written
through the API (a 1 MB LangGraph store value, say) could be exported but never
imported again.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from dreammem import DreamMemConfig, DreamMemory, ValidationError
from dreammem.config import WriteConfig
from dreammem.embed import HashingEmbedder
from dreammem.keyed import put_keyed

LIMIT = 2_000


def _memory(limit: int = LIMIT) -> DreamMemory:
    config = DreamMemConfig(write=WriteConfig(max_content_chars=limit))
    return DreamMemory(None, config=config, embedder=HashingEmbedder())


def _meta(chars: int) -> dict[str, str]:
    """Metadata whose JSON is exactly ``chars`` characters long."""
    base = len(json.dumps({"blob": ""}))
    return {"blob": "é" * (chars - base)}


WRITES: dict[str, Callable[[DreamMemory, dict[str, str]], object]] = {
    "add": lambda m, meta: m.add("hello", user_id="u1", metadata=meta),
    "add_many": lambda m, meta: m.add_many([{"content": "hello", "user_id": "u1", "metadata": meta}]),
    "remember": lambda m, meta: m.remember("I like tea", user_id="u1", metadata=meta),
    "task state": lambda m, meta: m.set_task_state(meta, user_id="u1", session_id="s1"),
    "keyed": lambda m, meta: put_keyed(m, user_id="u1", path=("p",), key="k", value=meta, text="tea"),
}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_metadata_over_the_limit_is_refused_and_nothing_is_written(write: str) -> None:
    with _memory() as memory:
        with pytest.raises(ValidationError, match=r"write\.max_content_chars"):
            WRITES[write](memory, _meta(LIMIT + 1))
        assert list(memory.get_all(user_id="u1", status=None)) == []
        assert memory.task_state(user_id="u1", session_id="s1") == {}


@pytest.mark.parametrize("write", sorted(WRITES))
def test_metadata_at_the_limit_is_written_and_survives_export_and_import(write: str) -> None:
    meta = _meta(LIMIT if write != "keyed" else LIMIT // 2)  # keyed wraps the value in its own fields
    with _memory() as source, _memory() as copy:
        WRITES[write](source, meta)
        exported = source.export(user_id="u1")
        copy.import_(exported, user_id="u1")
        assert copy.export(user_id="u1").splitlines()[1:] == exported.splitlines()[1:]
        assert [r.to_dict() for r in copy.get_all(user_id="u1", status=None)] == [
            r.to_dict() for r in source.get_all(user_id="u1", status=None)
        ]


def test_a_store_with_the_default_limit_takes_a_large_value_and_reads_it_back() -> None:
    source, copy = (DreamMemory(None, embedder=HashingEmbedder()) for _ in range(2))
    with source, copy:
        record = source.add("a long document", user_id="u1", metadata=_meta(90_000))
        copy.import_(source.export(user_id="u1"), user_id="u1")
        assert copy.get(record.id, user_id="u1").metadata == record.metadata
        with pytest.raises(ValidationError):
            source.add("too long", user_id="u1", metadata=_meta(100_001))
