"""recall(filters=...): metadata, agent, session, layers and kinds, inside the user scope."""

from __future__ import annotations

import pytest

from dreammem import DreamMemory, ValidationError
from dreammem.recall.filters import RecallFilter
from dreammem.types import Layer


@pytest.fixture
def filled(memory: DreamMemory) -> DreamMemory:
    # many planner memories about trips; a few support memories
    memory.add_many(
        {
            "content": f"Trip {n} to Lisbon booked for the team offsite",
            "user_id": "u1",
            "agent_id": "planner",
            "session_id": f"p{n % 3}",
            "metadata": {"project": "apollo", "n": n},
        }
        for n in range(120)
    )
    memory.add_many(
        {
            "content": text,
            "user_id": "u1",
            "agent_id": "support",
            "session_id": "help",
            "metadata": {"project": "zeus", "urgent": True},
        }
        for text in ("Trip refund requested by the customer", "Trip invoice resent", "Trip voucher expired")
    )
    memory.remember(
        "Trip budgets need sign-off", user_id="u1", agent_id="planner", metadata={"project": "apollo"}
    )
    memory.add("Trip to Lisbon for u2", user_id="u2", agent_id="support", metadata={"project": "zeus"})
    return memory


def test_a_selective_filter_still_fills_k(filled: DreamMemory) -> None:
    result = filled.recall("Trip to Lisbon booked", user_id="u1", k=3, filters={"agent_id": "support"})
    assert len(result.hits) == 3
    assert {h.record.agent_id for h in result} == {"support"}
    assert {h.record.user_id for h in result} == {"u1"}  # the scope holds


@pytest.mark.parametrize(
    ("filters", "check"),
    [
        ({"metadata": {"project": "zeus"}}, lambda r: r.metadata["project"] == "zeus"),
        ({"metadata": {"urgent": True}}, lambda r: r.metadata.get("urgent") is True),
        ({"metadata": {"n": 7}}, lambda r: r.metadata.get("n") == 7),
        ({"session_id": "p1"}, lambda r: r.session_id == "p1"),
        ({"layers": ["semantic"]}, lambda r: r.layer is Layer.SEMANTIC),
        ({"layers": "episodic", "agent_id": "planner"}, lambda r: r.layer is Layer.EPISODIC),
        ({"kinds": ["turn"], "metadata": {"project": "zeus"}}, lambda r: r.agent_id == "support"),
    ],
)
def test_every_hit_meets_the_filter(filled: DreamMemory, filters: dict[str, object], check: object) -> None:
    result = filled.recall("Trip", user_id="u1", k=5, filters=filters)
    assert result.hits
    parsed = RecallFilter.parse(filters)
    assert parsed is not None
    for hit in result:
        assert parsed.matches(hit.record) and check(hit.record)  # type: ignore[operator]


def test_pinned_memories_obey_the_filter(filled: DreamMemory) -> None:
    pinned = [
        h for h in filled.recall("Trip", user_id="u1", filters={"agent_id": "support"}) if h.record.pinned
    ]
    assert pinned == []
    planner = filled.recall("Trip", user_id="u1", filters=RecallFilter(agent_id="planner"))
    assert any(h.record.pinned for h in planner)


def test_true_is_not_one_and_nothing_matches_gives_no_hits(filled: DreamMemory) -> None:
    assert filled.recall("Trip", user_id="u1", filters={"metadata": {"urgent": 1}}).hits == ()
    assert filled.recall("Trip", user_id="u1", filters={"agent_id": "nobody"}).hits == ()
    assert filled.recall("Trip", user_id="u1", filters={}).hits  # an empty filter filters nothing


@pytest.mark.parametrize(
    "bad",
    [
        "agent_id=x",
        {"agent": "x"},
        {"layers": ["attic"]},
        {"layers": []},
        {"kinds": 3},
        {"agent_id": 5},
        {"session_id": ""},
        {"metadata": "project"},
        {"metadata": {"x": float("nan")}},
    ],
)
def test_bad_filters_are_typed_errors(filled: DreamMemory, bad: object) -> None:
    with pytest.raises(ValidationError):
        filled.recall("Trip", user_id="u1", filters=bad)  # type: ignore[arg-type]
