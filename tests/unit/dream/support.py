"""Shared helpers for the dream tests: seeding a store, snapshots, scripted LLMs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreammem import DreamMemory, MemoryRecord

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


LONG_TERM_TURNS = [
    ("s1", "user", "Remember: I am allergic to peanuts"),
    ("s1", "assistant", "I looked at the layout of the dashboard"),
    ("s3", "user", "Tom Becker from Acme Corp signs the contracts"),
    ("s2", "assistant", "I looked at the layout of the dashboard."),
    ("s2", "user", "I prefer Excel reports over PDF"),
]
"""Turns whose level-1 dream leaves two session summaries with the same words (a level-2 merge)."""


def conversation() -> list[tuple[str, str, str]]:
    data = json.loads((FIXTURES / "dream_conversation.json").read_text(encoding="utf-8"))
    return [(s, r, c) for s, r, c in data["turns"]]


def seed(
    memory: DreamMemory,
    user: str = "u1",
    turns: list[tuple[str, str, str]] | None = None,
    start: datetime = T0,
) -> list[MemoryRecord]:
    items = [
        {
            "content": c,
            "role": r,
            "user_id": user,
            "session_id": s,
            "event_time": start + timedelta(minutes=i),
        }
        for i, (s, r, c) in enumerate(turns if turns is not None else conversation())
    ]
    return memory.add_many(items)


def snapshot(memory: DreamMemory) -> dict[str, Any]:
    """Everything in SQLite that a dream may change, comparable with ==."""
    store = memory.store
    return {
        "records": [tuple(r) for r in store.fetchall("SELECT * FROM records ORDER BY rowid")],
        "queue": [tuple(r) for r in store.fetchall("SELECT * FROM queue ORDER BY record_id")],
        "dreams": [tuple(r) for r in store.fetchall("SELECT id, status FROM dreams ORDER BY rowid")],
        "fts": [tuple(r) for r in store.fetchall("SELECT rowid, terms FROM records_fts ORDER BY rowid")],
        "vectors": store.fetchone("SELECT COUNT(*) FROM vectors")[0],
    }


def active_contents(memory: DreamMemory, user: str = "u1") -> list[str]:
    return sorted(r.content for r in memory.get_all(user_id=user, limit=1000))


class MalformedLLM:
    """Always answers something that is not the JSON asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        return "Sure! Here are the scores: r1 is great, r2 is meh {not json"


class WrongIdsLLM:
    """Answers valid JSON about ids that were never asked for."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        return json.dumps({"scores": [{"id": "r999", "score": 5}, {"id": "x1", "score": 1}]})


class SlowLLM:
    """Sleeps longer than the dream's timeout."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls = 0

    def __call__(self, prompt: str) -> str:
        self.calls += 1
        time.sleep(self.seconds)
        return "{}"


class CallbackLLM:
    """Runs a callback on the first call, then delegates (to make races happen mid-dream)."""

    def __init__(self, callback: Callable[[], None], inner: Callable[[str], str]) -> None:
        self.callback = callback
        self.inner = inner
        self.fired = False

    def __call__(self, prompt: str) -> str:
        if not self.fired:
            self.fired = True
            self.callback()
        return self.inner(prompt)
