"""Dream and undo over generated conversations: undo gives back exactly what the dream took.

The streams mix slot values (preferences, budgets, cities) written out of time order,
repeated observations (patterns), chatter, tool output, assistant turns and Chinese,
so the dream's stages (score, distill, migrate, forget, conflicts) all have work.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreammem import DreamMemory, Status
from dreammem.embed import HashingEmbedder
from tests.unit.dream.support import T0, snapshot

TEMPLATES = [
    ("user", "I prefer {color} reports over PDF"),
    ("user", "My budget is {n} USD"),
    ("user", "I live in {city} now"),
    ("user", "Remember: I am allergic to {food}"),
    ("user", "I looked at the layout of the dashboard"),
    ("user", "ok thanks"),
    ("user", "我的预算是{n}元"),
    ("user", "Flight LH {n} leaves from gate B{gate}"),
    ("assistant", "I booked the table at {city} Bistro for {n} people"),
    ("tool", "Order #{n} ships on 2026-07-{gate}"),
]
WORDS = {
    "color": ["Excel", "Word", "Numbers", "LibreOffice"],
    "city": ["Porto", "Lisbon", "Berlin", "Kyoto"],
    "food": ["peanuts", "shellfish", "sesame"],
}


@st.composite
def turns(draw: Any) -> list[dict[str, Any]]:
    count = draw(st.integers(min_value=2, max_value=14))
    items = []
    for i in range(count):
        role, template = draw(st.sampled_from(TEMPLATES))
        text = template.format(
            color=draw(st.sampled_from(WORDS["color"])),
            city=draw(st.sampled_from(WORDS["city"])),
            food=draw(st.sampled_from(WORDS["food"])),
            n=draw(st.integers(min_value=10, max_value=99_999)),
            gate=draw(st.integers(min_value=10, max_value=28)),
        )
        minutes = draw(st.integers(min_value=0, max_value=600))  # event times out of write order
        items.append(
            {
                "content": text,
                "role": role,
                "user_id": "u1",
                "session_id": f"s{draw(st.integers(min_value=1, max_value=3))}",
                "event_time": T0 + timedelta(minutes=minutes, seconds=i),
            }
        )
    return items


def _state(memory: DreamMemory) -> dict[str, object]:
    """The snapshot without the dream log (undo marks a dream undone, it does not delete it)."""
    return {k: v for k, v in snapshot(memory).items() if k != "dreams"}


def _numbers(memory: DreamMemory) -> set[str]:
    text = " ".join(r.content for r in memory.get_all(user_id="u1", limit=1000))
    return set(re.findall(r"\d+", text))


_SETTINGS = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@_SETTINGS
@given(stream=turns())
def test_undo_gives_back_the_state_before_the_dream(stream: list[dict[str, Any]]) -> None:
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(stream)
        recall_before = memory.recall("budget reports city", user_id="u1", k=10).ids  # counts an access
        before = _state(memory)
        report = memory.dream(user_id="u1")
        assert memory.store.queue_size("u1") == 0
        result = memory.undo_dream(report.dream_id, user_id="u1")
        assert result.requeued == report.queued and result.skipped == ()
        assert _state(memory) == before
        assert memory.recall("budget reports city", user_id="u1", k=10).ids == recall_before


def _contents(memory: DreamMemory) -> list[tuple[str, ...]]:
    """Every record by what it says and its state, without ids (two stores compare equal)."""
    return sorted(
        (r.content, r.status.value, r.layer.value, r.kind.value, r.event_time.isoformat(), r.slot or "")
        for r in memory.get_all(user_id="u1", status=None, limit=1000)
    )


@_SETTINGS
@given(first=turns(), second=turns())
def test_stacked_dreams_undo_newest_first_back_to_no_dream_at_all(
    first: list[dict[str, Any]], second: list[dict[str, Any]]
) -> None:
    later = [{**t, "event_time": t["event_time"] + timedelta(days=1)} for t in second]
    with DreamMemory(None, embedder=HashingEmbedder()) as plain:
        plain.add_many(first)
        plain.add_many(later)
        expected = _contents(plain)
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(first)
        one = memory.dream(user_id="u1")
        memory.add_many(later)
        middle = _state(memory)
        two = memory.dream(user_id="u1")
        level_two = memory.dream(user_id="u1", level=2)
        memory.undo_dream(level_two.dream_id, user_id="u1")
        memory.undo_dream(two.dream_id, user_id="u1")
        assert _state(memory) == middle
        memory.undo_dream(one.dream_id, user_id="u1")
        assert _contents(memory) == expected
        assert memory.store.queue_size("u1") == len(first) + len(later)


@_SETTINGS
@given(stream=turns())
def test_a_dry_run_predicts_the_dream_and_writes_nothing(stream: list[dict[str, Any]]) -> None:
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(stream)
        before = _state(memory)
        preview = memory.dream(user_id="u1", dry_run=True)
        assert _state(memory) == before
        real = memory.dream(user_id="u1")
        assert preview.counts == real.counts
        assert preview.kept == real.kept


@_SETTINGS
@given(stream=turns())
def test_a_dream_keeps_every_number_that_active_memory_holds(stream: list[dict[str, Any]]) -> None:
    """Amounts, ids and dates survive consolidation verbatim (the verbatim guard)."""
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(stream)
        before = _numbers(memory)
        report = memory.dream(user_id="u1")
        archived = {c.id for c in report.archived}
        lost = before - _numbers(memory)
        # only what the dream archived as worthless may take its numbers along
        gone = " ".join(memory.get(i, user_id="u1").content for i in archived)
        assert all(n in gone for n in lost), (lost, report.counts)
        for change in report.archived:
            assert memory.get(change.id, user_id="u1").status is Status.ARCHIVED
