"""The last untyped errors: each bad input below raises a DreamMem error, not a builtin one.

One row per input: the call, the typed error it must raise, and (for a write) that
nothing was written. Before these checks the rows raised ``TypeError``,
``AttributeError``, ``FileExistsError``, ``OverflowError``, ``ValueError`` or
``UnicodeEncodeError`` from deep inside the store.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, tzinfo
from pathlib import Path

import pytest
from llama_index.core.llms import ChatMessage

from dreammem import ConfigError, DreamMemError, DreamMemory, ValidationError
from langchain_dreammem import DreamMemStore
from llamaindex_dreammem import DreamMemMemory


class _Offset(tzinfo):
    """A timezone whose offset Python refuses to use (24 hours or more)."""

    def __init__(self, hours: int) -> None:
        self.hours = hours

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return timedelta(hours=self.hours)

    def dst(self, dt: datetime | None) -> None:
        return None

    def tzname(self, dt: datetime | None) -> str:
        return f"UTC{self.hours:+d}"


Call = Callable[[DreamMemory, Path], object]


def _time_calls(hours: int) -> list[tuple[str, Call, type[DreamMemError]]]:
    when = datetime(2024, 1, 1, 12, tzinfo=_Offset(hours))
    v = ValidationError
    return [
        (f"add event_time {hours:+d}h", lambda m, _: m.add("hi", user_id="u1", event_time=when), v),
        (
            f"add_many event_time {hours:+d}h",
            lambda m, _: m.add_many([{"content": "hi", "user_id": "u1", "event_time": when}]),
            v,
        ),
        (f"recall now {hours:+d}h", lambda m, _: m.recall("hi", user_id="u1", now=when), v),
        (f"dream now {hours:+d}h", lambda m, _: m.dream(user_id="u1", now=when), v),
        (f"maybe_dream now {hours:+d}h", lambda m, _: m.maybe_dream("u1", now=when), v),
        (f"end_task now {hours:+d}h", lambda m, _: m.end_task(user_id="u1", outcome="done", now=when), v),
        (
            f"end_session now {hours:+d}h",
            lambda m, _: m.end_session(user_id="u1", session_id="s", now=when),
            v,
        ),
    ]


def _file(tmp: Path) -> Path:
    (tmp / "a-file").write_text("not a folder")
    return tmp / "a-file"


def _store(memory: DreamMemory) -> DreamMemStore:
    """The LangGraph store over ``memory``, holding one item with a 1,100-bit integer."""
    store = DreamMemStore(memory)
    if store.get(("u1",), "big") is None:
        store.put(("u1",), "big", {"n": 2**1100, "text": "a huge number"})
    return store


def _chat(memory: DreamMemory) -> DreamMemMemory:
    return DreamMemMemory.from_defaults(memory=memory, user_id="u1", session_id="s1")


CASES: list[tuple[str, Call, type[DreamMemError]]] = [
    ("constructor path int", lambda _, t: DreamMemory(123), ConfigError),  # type: ignore[arg-type]
    ("constructor path is a file", lambda _, t: DreamMemory(_file(t)), ConfigError),
    ("constructor path under a file", lambda _, t: DreamMemory(_file(t) / "s"), ConfigError),
    ("constructor path NUL", lambda _, t: DreamMemory(str(t / "a\x00b")), ConfigError),
    ("constructor config dict", lambda _, t: DreamMemory(None, config={"x": 1}), ConfigError),  # type: ignore[arg-type]
    ("constructor config empty dict", lambda _, t: DreamMemory(None, config={}), ConfigError),  # type: ignore[arg-type]
    ("constructor embedder name", lambda _, t: DreamMemory(None, embedder="minilm"), ConfigError),  # type: ignore[arg-type]
    ("constructor embedder object", lambda _, t: DreamMemory(None, embedder=object()), ConfigError),  # type: ignore[arg-type]
    ("constructor graph name", lambda _, t: DreamMemory(None, graph="neo4j"), ConfigError),  # type: ignore[arg-type]
    ("constructor graph object", lambda _, t: DreamMemory(None, graph=object()), ConfigError),  # type: ignore[arg-type]
    ("reindex embedder name", lambda m, _: m.reindex(embedder="x"), ConfigError),  # type: ignore[arg-type]
    *_time_calls(24),
    *_time_calls(-24),
    *_time_calls(25),
    ("get_all offset 2**63", lambda m, _: m.get_all(user_id="u1", offset=2**63), ValidationError),
    ("get_all offset 2**64", lambda m, _: m.get_all(user_id="u1", offset=2**64), ValidationError),
    ("store search int query", lambda m, _: _store(m).search(("u1",), query=123), ValidationError),  # type: ignore[arg-type]
    ("store search list query", lambda m, _: _store(m).search(("u1",), query=["a"]), ValidationError),  # type: ignore[arg-type]
    (
        "store search unknown operator",
        lambda m, _: _store(m).search(("u1",), filter={"n": {"$near": 1}}),
        ValidationError,
    ),
    (
        "llamaindex put lone surrogate",
        lambda m, _: _chat(m).put(ChatMessage(role="user", content="bad \ud800 text")),
        ValidationError,
    ),
]


@pytest.mark.parametrize(("call", "error"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_typed_error(
    memory: DreamMemory, tmp_path: Path, call: Call, error: type[DreamMemError]
) -> None:
    memory.add("hello there, the museum trip", user_id="u1", session_id="s")
    _store(memory)
    before = memory.store.count()
    with pytest.raises(error):
        call(memory, tmp_path)
    assert memory.store.count() == before


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"$gt": float("nan")}, False),
        ({"$lt": float("nan")}, False),
        ({"$gt": 2**1100}, False),
        ({"$gte": 2**1100}, True),
        ({"$gt": 1e308}, True),
        ({"$lt": float("inf")}, True),
    ],
    ids=["gt-nan", "lt-nan", "gt-huge", "gte-huge", "gt-1e308", "lt-inf"],
)
def test_a_numeric_filter_against_a_huge_stored_integer_compares_exactly(
    memory: DreamMemory, condition: dict[str, float], expected: bool
) -> None:
    """NaN matches nothing; a 1,100-bit integer is compared exactly, not through float()."""
    found = _store(memory).search(("u1",), filter={"n": condition})
    assert bool(found) is expected
