"""The relative floor: with compressed cosines, a memory must stand out from the user's own."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from pydantic import ValidationError as PydanticError

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.embed.base import normalize_rows
from dreammem.recall.gate import (
    MIN_BACKGROUND,
    MUTUAL_FLOORS,
    RELATIVE_FLOORS,
    RelativeFloor,
    memory_standing,
    mutual_floor_for,
    mutual_misses,
    passes_relevance,
    relative_floor,
    relative_floor_for,
)


class CompressedEmbedder:
    """Hashing vectors, some per-text noise and one large shared direction: every cosine near 0.9.

    A stand-in for multilingual-e5's narrow band (the model is not the point here).
    """

    def __init__(self) -> None:
        self._inner = HashingEmbedder(4096)
        self.dim = 4096 + 32 + 1
        self.name = "compressed-test"

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        words = self._inner.embed_documents(texts)
        noise = np.stack([np.random.default_rng(zlib.crc32(t.encode())).normal(0, 0.01, 32) for t in texts])
        shared = np.full((len(texts), 1), 3.0)
        return normalize_rows(np.hstack([shared, words, noise]).astype(np.float32))

    def embed_query(self, text: str) -> npt.NDArray[np.float32]:
        return np.asarray(self.embed_documents([text])[0], dtype=np.float32)


TOPICS = [
    "I water the fern every Sunday morning",
    "My sister plays the oboe in an orchestra",
    "The dentist appointment moved to Thursday",
    "I keep my bicycle in the basement",
    "Our cat refuses to eat dry food",
    "The kitchen tap drips at night",
    "I collect old postage stamps from Peru",
    "My running shoes are bright orange",
    "The neighbours are painting their fence green",
    "I learned to bake sourdough bread in spring",
    "The library closes early on Fridays",
    "My laptop fan makes a rattling noise",
    "We planted tomatoes along the south wall",
    "I prefer aisle seats on long trains",
    "The car needs new winter tyres",
    "My grandmother knits scarves for the whole family",
]


def _memory(tmp_path: Path, relative: float | None) -> DreamMemory:
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=0.8, relative_floor=relative))
    return DreamMemory(tmp_path / f"m{relative}", embedder=CompressedEmbedder(), config=config)


@pytest.mark.parametrize("relative", [None, 2.0])
def test_with_compressed_cosines_only_the_relative_floor_keeps_unrelated_questions_out(
    tmp_path: Path, relative: float | None
) -> None:
    with _memory(tmp_path, relative) as memory:
        memory.add_many([{"content": t, "user_id": "u1"} for t in TOPICS])
        unrelated = memory.recall("the savings account interest rates", user_id="u1", k=5)
        fern = memory.recall("when do I water the fern", user_id="u1", k=5)
    assert fern.hits and fern[0].record.content == TOPICS[0]
    if relative is None:
        assert unrelated.hits  # every cosine clears the absolute floor: something is injected
        assert len(fern) == 5
    else:
        assert unrelated.hits == ()
        assert [h.record.content for h in fern] == [TOPICS[0]]


def _diary(memory: DreamMemory, now: datetime) -> None:
    """TOPICS said one per day, the newest yesterday."""
    memory.add_many(
        [
            {"content": t, "user_id": "u1", "event_time": now - timedelta(days=n + 1)}
            for n, t in enumerate(TOPICS)
        ]
    )


@pytest.mark.parametrize(
    "question", ["Whose gig did I go to the last time?", "Which band did I see most recently?"]
)
def test_a_time_word_does_not_make_an_unrelated_memory_relevant(tmp_path: Path, question: str) -> None:
    # The temporal path orders content matches by time; before, every one of them passed the floor.
    now = datetime(2026, 3, 6, 12, tzinfo=UTC)
    with _memory(tmp_path, 2.0) as memory:
        _diary(memory, now)
        found = memory.recall(question, user_id="u1", k=5, now=now)
    assert found.hits == ()


def test_memories_of_the_window_asked_about_pass_by_time(tmp_path: Path) -> None:
    now = datetime(2026, 3, 6, 12, tzinfo=UTC)
    with _memory(tmp_path, 2.0) as memory:
        _diary(memory, now)
        memory.add("I watered the fern", user_id="other", event_time=now - timedelta(days=1))
        yesterday = memory.recall("what did I get up to yesterday?", user_id="u1", k=5, now=now)
        fern = memory.recall("when did I last water the fern?", user_id="u1", k=5, now=now)
    # Nothing in "what did I get up to" stands out, but yesterday's memory is from the day asked about.
    assert yesterday[0].record.content == TOPICS[0]
    assert yesterday[0].timed and yesterday[0].trace()["timed"]
    assert all(h.record.user_id == "u1" for h in yesterday)
    # A question ordered by time still finds its topic, judged by content (not timed).
    assert fern.hits and fern[0].record.content == TOPICS[0] and not fern[0].timed


@pytest.mark.parametrize(
    ("question", "timed"),
    [
        ("我们昨天做了什么？", True),
        ("What happened yesterday?", True),
        ("Which restaurant did I book yesterday?", False),  # a topic: the window only narrows the search
        ("Where did I buy coffee yesterday?", False),
    ],
)
def test_a_window_passes_by_time_only_when_the_question_names_no_topic(
    tmp_path: Path, question: str, timed: bool
) -> None:
    now = datetime(2026, 3, 6, 12, tzinfo=UTC)
    with _memory(tmp_path, 2.0) as memory:
        _diary(memory, now)
        found = memory.recall(question, user_id="u1", k=5, now=now)
    if timed:
        assert found.hits and found[0].record.content == TOPICS[0] and found[0].timed
    else:
        assert found.hits == ()


def test_the_background_is_the_users_own_and_a_small_store_has_none(tmp_path: Path) -> None:
    few = TOPICS[: MIN_BACKGROUND - 1]
    with _memory(tmp_path, 2.0) as memory:
        memory.add_many([{"content": t, "user_id": "many"} for t in TOPICS])
        memory.add_many([{"content": t, "user_id": "few"} for t in few])
        crowded = memory.recall("the savings account interest rates", user_id="many", k=5)
        small = memory.recall("the savings account interest rates", user_id="few", k=5)
    assert crowded.hits == ()
    # Too few memories of its own to judge by: the absolute floor alone, and only its own memories.
    assert small.hits and all(h.record.user_id == "few" for h in small)
    assert {h.record.content for h in small} <= set(few)


def test_relative_floor_math_and_degenerate_backgrounds() -> None:
    rng = np.random.default_rng(3)
    background = normalize_rows(rng.normal(size=(40, 8)))
    query = background[0]
    floor = relative_floor(query, background, 2.0)
    assert floor is not None
    scores = background @ query
    assert floor.mean == pytest.approx(float(scores.mean()), abs=1e-6)
    assert floor.sd == pytest.approx(float(scores.std()), abs=1e-6)
    assert floor.passes(floor.mean + 2.01 * floor.sd)
    assert not floor.passes(floor.mean + 1.99 * floor.sd)
    assert relative_floor(query, background[: MIN_BACKGROUND - 1], 2.0) is None
    assert relative_floor(query, np.tile(background[:1], (20, 1)), 2.0) is None  # no spread


def test_a_hit_is_judged_by_its_best_cosine_and_needs_one() -> None:
    floor = RelativeFloor(mean=0.8, sd=0.02, z=2.0)
    args = {"floor": 0.5, "query_passes": True, "relative": floor}
    assert passes_relevance(0.85, **args)
    assert not passes_relevance(0.83, **args)
    assert passes_relevance(0.83, inherited=0.9, **args)  # a current value inherits
    assert passes_relevance(None, cosine=0.86, **args)  # found by keyword only
    assert not passes_relevance(None, cosine=0.81, **args)
    assert not passes_relevance(None, **args)  # no cosine: cannot stand out
    assert passes_relevance(None, timed=True, **args)  # in the window asked about
    assert not passes_relevance(None, **args)  # found by content, only ordered by time
    assert not passes_relevance(0.83, **args)
    assert passes_relevance(0.83, floor=0.5, query_passes=True)  # no relative floor


def test_relative_floor_lookup() -> None:
    assert relative_floor_for("all-MiniLM-L6-v2", RecallConfig()) is None
    e5 = "multilingual-e5-small"
    assert relative_floor_for(e5, RecallConfig()) == RELATIVE_FLOORS[e5]
    assert relative_floor_for("anything", RecallConfig(relative_floor=1.5)) == 1.5
    assert relative_floor_for(next(iter(RELATIVE_FLOORS)), RecallConfig(relative_floor=None)) is None


@pytest.mark.parametrize(
    "fields",
    [
        {"relative_floor": "high"},
        {"relative_floor": float("nan")},
        {"relative_floor": 11.0},
        {"mutual_floor": "low"},
        {"mutual_floor": float("inf")},
        {"mutual_floor": -11.0},
        {"background_size": 1},
        {"background_size": 10_000},
    ],
)
def test_bad_relative_floor_settings_are_config_errors(fields: dict[str, object]) -> None:
    with pytest.raises(PydanticError):
        RecallConfig(**fields)  # type: ignore[arg-type]


# -- the mutual floor: the question must stand out for the memory too -------------------------------

HUB = "On Sunday my sister, the cat and the neighbours came by; the kitchen, the car and the laptop need work"
"""A memory that shares a word with nearly every other: it sits near every question."""


@pytest.mark.parametrize("mutual", [None, 1.5])
def test_a_memory_near_everything_does_not_answer_an_unrelated_question(
    tmp_path: Path, mutual: float | None
) -> None:
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=0.8, relative_floor=2.0, mutual_floor=mutual))
    with DreamMemory(tmp_path / "m", embedder=CompressedEmbedder(), config=config) as memory:
        memory.add_many([{"content": t, "user_id": "u1"} for t in [*TOPICS, HUB]])
        unrelated = memory.recall("the savings account interest rates", user_id="u1", k=5)
        fern = memory.recall("when do I water the fern", user_id="u1", k=5)
    # Seen from the question, the hub stands out from the user's memories; seen from the hub, the
    # question is no closer than the hub's own neighbours are.
    assert [h.record.content for h in unrelated] == ([HUB] if mutual is None else [])
    assert [h.record.content for h in fern] == [TOPICS[0]]


def test_memory_standing_leaves_the_memory_itself_out() -> None:
    rng = np.random.default_rng(5)
    background = normalize_rows(rng.normal(size=(30, 8)))
    standing = memory_standing(background[0], background)
    assert standing is not None
    others = background[1:] @ background[0]
    assert standing == pytest.approx((float(others.mean()), float(others.std())), abs=1e-6)
    assert memory_standing(background[0], background[:MIN_BACKGROUND]) is None  # itself left out: too few
    assert memory_standing(background[0], np.tile(background[1:2], (20, 1))) is None  # no spread


def test_mutual_misses_judge_each_hit_by_its_own_neighbours() -> None:
    rng = np.random.default_rng(6)
    background = normalize_rows(rng.normal(size=(30, 8)))
    mean, sd = memory_standing(background[0], background) or (0.0, 1.0)
    cosines = {"near": mean + 2.0 * sd, "far": mean + 0.5 * sd, "unknown": 0.0}
    vectors = {"near": background[0], "far": background[0]}
    assert mutual_misses(cosines, vectors, background, 1.0) == {"far"}  # no vector: not judged


def test_a_hit_failing_the_mutual_floor_passes_only_by_what_it_inherits() -> None:
    args = {"floor": 0.5, "query_passes": True, "relative": RelativeFloor(mean=0.8, sd=0.02, z=2.0)}
    assert passes_relevance(0.9, **args)
    assert not passes_relevance(0.9, mutual=False, **args)
    assert passes_relevance(0.9, inherited=0.86, mutual=False, **args)
    assert not passes_relevance(0.9, inherited=0.81, mutual=False, **args)


def test_mutual_floor_lookup() -> None:
    e5 = "multilingual-e5-small"
    assert mutual_floor_for(e5, RecallConfig()) == MUTUAL_FLOORS[e5]
    assert mutual_floor_for("all-MiniLM-L6-v2", RecallConfig()) is None
    assert mutual_floor_for(e5, RecallConfig(mutual_floor=None)) is None
    assert mutual_floor_for("anything", RecallConfig(mutual_floor=0.5)) == 0.5


def test_the_mutual_floor_reads_only_the_users_own_memories(tmp_path: Path) -> None:
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=0.8, relative_floor=2.0, mutual_floor=1.5))
    with DreamMemory(tmp_path / "m", embedder=CompressedEmbedder(), config=config) as memory:
        memory.add_many([{"content": t, "user_id": "u1"} for t in TOPICS])
        memory.add_many([{"content": t, "user_id": "u2"} for t in [HUB, *TOPICS[:12]]])
        fern = memory.recall("when do I water the fern", user_id="u1", k=5)
        theirs = memory.recall("the savings account interest rates", user_id="u2", k=5)
        mine = memory.recall("the savings account interest rates", user_id="u1", k=5)
    assert [(h.record.content, h.record.user_id) for h in fern] == [(TOPICS[0], "u1")]
    assert mine.hits == ()
    assert all(h.record.user_id == "u2" for h in theirs) and HUB not in {h.record.content for h in theirs}
