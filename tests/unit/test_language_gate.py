"""An English-only model's cosine does not judge a Chinese question: its words or its time do."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from dreammem import DreamMemConfig, DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed.models import MINILM, E5Embedder
from dreammem.embed.numpy_bert import NumpyBertEmbedder
from dreammem.recall.gate import judges_language

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
TEXTS = [
    "我叫李明，在上海做产品经理。",
    "项目预算是五十万元，不能超过。",
    "下周三要和客户开会。",
    "我喜欢喝绿茶。",
    "以后开会都换成飞书吧，腾讯会议别用了。",
    "我女儿今年六岁了。",
    "周末想去杭州玩。",
    "报告用PDF格式发给我。",
]


def _recall(tmp_path: Path, minilm: NumpyBertEmbedder, question: str, **recall: object) -> list[str]:
    config = DreamMemConfig(recall=RecallConfig.model_validate(recall))
    with DreamMemory(tmp_path / "m", embedder=minilm, config=config) as memory:
        if not memory.get_all(user_id="u"):
            memory.add_many(
                [
                    {
                        "content": t,
                        "user_id": "u",
                        "session_id": "s",
                        "event_time": NOW + timedelta(minutes=n),
                    }
                    for n, t in enumerate(TEXTS)
                ]
            )
        hits = memory.recall(question, user_id="u", k=5, now=NOW + timedelta(days=1)).hits
        return [h.record.content for h in hits]


@pytest.mark.parametrize("question", ["推荐一部好看的科幻电影。", "帮我写一首关于春天的诗。"])
def test_a_chinese_question_without_a_memory_of_its_words_recalls_nothing(
    tmp_path: Path, minilm: NumpyBertEmbedder, question: str
) -> None:
    assert _recall(tmp_path, minilm, question) == []
    # MiniLM's cosines alone let every memory through (the fixed floor is the caller's choice).
    assert len(_recall(tmp_path, minilm, question, relevance_floor=0.30)) == 5


def test_a_chinese_question_recalls_the_memory_holding_its_words(
    tmp_path: Path, minilm: NumpyBertEmbedder
) -> None:
    assert _recall(tmp_path, minilm, "项目预算是多少？")[0] == TEXTS[1]


def test_a_chinese_question_about_a_time_recalls_what_was_said_then(
    tmp_path: Path, minilm: NumpyBertEmbedder
) -> None:
    assert set(_recall(tmp_path, minilm, "昨天我说了什么？")) & set(TEXTS)


@pytest.mark.parametrize(
    ("model", "floor", "question", "judges"),
    [
        (MINILM, "auto", "项目预算是多少？", False),
        (MINILM, "auto", "What is the budget?", True),
        (MINILM, 0.3, "项目预算是多少？", True),
        (E5Embedder.name, "auto", "项目预算是多少？", True),
    ],
)
def test_which_cosines_judge_which_questions(model: str, floor: object, question: str, judges: bool) -> None:
    config = RecallConfig.model_validate({"relevance_floor": floor})
    assert judges_language(model, config, question) is judges
