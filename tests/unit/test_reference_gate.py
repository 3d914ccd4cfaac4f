"""The reference gate on small stores, English (MiniLM) and Chinese (multilingual-e5), real models.

A store of a handful of memories must recall nothing for a question none of them answers, and
still recall the one memory that answers a question: the gate compares cosines with generic text
the package ships (dreammem.recall.reference), not with the user's few memories.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.embed.models import MINILM, E5Embedder
from dreammem.recall.reference import (
    MINILM_FLOORS,
    REFERENCE_FLOORS,
    ReferenceFloors,
    reference_floors_for,
    reference_set,
    standing,
)
from dreammem.recall.reference_texts import REQUESTS, STATEMENTS

ENGLISH = (
    "I drive a 2015 Honda Civic.",
    "Write code comments in English.",
    "It rained all afternoon here.",
    "I finally finished that mystery novel.",
    "My manager is Priya.",
    "I'm reading 'Project Hail Mary' by Andy Weir at the moment.",
)
CHINESE = (
    "以后开会都换成飞书吧，腾讯会议别用了。",
    "我家在南京。",
    "我在支付组。",
    "我每天早上喝两杯咖啡。",
    "报表给我发PDF。",
    "项目预算是五十万元。",
)
UNRELATED = {
    "en": (
        "Write me a short poem about autumn.",
        "How do I convert a list to a set in Python?",
        "What is the capital of Australia?",
    ),
    "zh": (
        "推荐一部好看的科幻电影。",
        "帮我写一首关于春天的诗。",
        "Python里怎么把列表转成集合？",
        "澳大利亚的首都是哪里？",
    ),
}
ANSWERED = {
    "en": (("What book am I reading?", "Project Hail Mary"), ("Who is my manager?", "Priya")),
    "zh": (("项目预算是多少？", "五十万"), ("我们开会用什么软件？", "飞书")),
}


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    return E5Embedder()


def _store(
    tmp_path: Path, embedder: Embedder, memories: tuple[str, ...], config: DreamMemConfig | None = None
) -> Iterator[DreamMemory]:
    with DreamMemory(tmp_path / "store", embedder=embedder, config=config) as memory:
        start = datetime(2026, 11, 2, 9, tzinfo=UTC)
        for n, text in enumerate(memories):
            memory.add(text, user_id="u", event_time=start + timedelta(hours=n))
        yield memory


@pytest.fixture
def english(tmp_path: Path, minilm: Embedder) -> Iterator[DreamMemory]:
    """MiniLM with its reference thresholds opted in (not its default: docs/BENCHMARKS.md, Session 23)."""
    floors = (MINILM_FLOORS.query, MINILM_FLOORS.memory)
    yield from _store(tmp_path, minilm, ENGLISH, DreamMemConfig(recall=RecallConfig(reference_floor=floors)))


@pytest.fixture
def chinese(tmp_path: Path, e5: E5Embedder) -> Iterator[DreamMemory]:
    """Multilingual e5, calibrated thresholds opted in (``reference_floor="auto"``, off by default)."""
    yield from _store(tmp_path, e5, CHINESE, DreamMemConfig(recall=RecallConfig(reference_floor="auto")))


@pytest.mark.parametrize("question", UNRELATED["en"])
def test_a_small_english_store_recalls_nothing_for_an_unrelated_question(
    english: DreamMemory, question: str
) -> None:
    assert [h.record.content for h in english.recall(question, user_id="u", k=5)] == []


@pytest.mark.parametrize("question", UNRELATED["zh"])
def test_a_small_chinese_store_recalls_nothing_for_an_unrelated_question(
    chinese: DreamMemory, question: str
) -> None:
    assert [h.record.content for h in chinese.recall(question, user_id="u", k=5)] == []


@pytest.mark.parametrize(("question", "answer"), ANSWERED["en"])
def test_a_small_english_store_recalls_the_memory_that_answers(
    english: DreamMemory, question: str, answer: str
) -> None:
    hits = english.recall(question, user_id="u", k=5)
    assert answer in hits[0].record.content


@pytest.mark.parametrize(("question", "answer"), ANSWERED["zh"])
def test_a_small_chinese_store_recalls_the_memory_that_answers(
    chinese: DreamMemory, question: str, answer: str
) -> None:
    hits = chinese.recall(question, user_id="u", k=5)
    assert answer in hits[0].record.content


def test_the_reference_sets_are_paired_per_language_and_embedded_once(minilm: Embedder) -> None:
    assert set(STATEMENTS) == set(REQUESTS) == {"en", "zh"}
    assert all(len(STATEMENTS[lang]) >= 40 and len(REQUESTS[lang]) >= 40 for lang in STATEMENTS)
    assert reference_set(minilm) is reference_set(minilm)


def test_standing_is_robust_to_one_reference_on_the_question_topic() -> None:
    scores = np.array([0.1] * 20 + [0.11] * 20 + [0.9], dtype=np.float32)
    centre, spread = standing(scores)
    assert centre == pytest.approx(0.1, abs=0.011)
    assert spread < 0.05


def test_the_config_sets_or_switches_off_the_reference_gate() -> None:
    auto = RecallConfig(reference_floor="auto")
    assert reference_floors_for(E5Embedder.name, RecallConfig()) is None  # off by default
    assert reference_floors_for(E5Embedder.name, auto) == REFERENCE_FLOORS[E5Embedder.name]
    assert reference_floors_for(MINILM, auto) is None
    assert reference_floors_for("hashing-256", RecallConfig()) is None
    chosen = RecallConfig(reference_floor=(1.0, 2.0))
    assert reference_floors_for("hashing-256", chosen) == ReferenceFloors(1.0, 2.0)
    assert reference_floors_for(E5Embedder.name, RecallConfig(reference_floor=None)) is None
    assert reference_floors_for(E5Embedder.name, RecallConfig(relevance_floor=0.83)) is None
    assert reference_floors_for(E5Embedder.name, RecallConfig(relevance_floor=None)) is None
    assert DreamMemConfig(recall=chosen).recall.reference_floor == (1.0, 2.0)
