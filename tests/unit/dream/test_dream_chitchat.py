"""Chit-chat after a dream (issue 34, item 4): acknowledgements are archived, not summarised,
and a summary never reaches the top k for a question it shares no content with."""

from __future__ import annotations

import pytest

from dreammem import DreamMemory
from dreammem.types import Kind, Status

CHAT = {
    "en": [
        "I had a long meeting this morning.",
        "Let me check my calendar.",
        "The coffee machine at the office is broken again.",
        "One moment, let me look.",
        "Sure, got it.",
    ],
    "zh": [
        "上午开了一个很长的会。",
        "我看一下日历。",
        "办公室的咖啡机又坏了。",
        "稍等，我查一下。",
        "好的，收到。",
    ],
}
FACTS = {
    "en": ["My sister Anna lives in Lisbon.", "I drive a blue Skoda Octavia."],
    "zh": ["我妹妹安娜住在里斯本。", "我开一辆蓝色的斯柯达。"],
}
QUESTIONS = {
    "en": ["Which city does Anna live in?", "What car do I drive?", "Recommend a good science fiction film."],
    "zh": ["安娜住在哪个城市？", "我开什么车？", "推荐一部好看的科幻电影。"],
}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_chit_chat_summary_in_the_top_3_of_an_unrelated_question(memory: DreamMemory, lang: str) -> None:
    memory.add_many([{"content": t, "user_id": "u1", "session_id": "chat"} for t in CHAT[lang]])
    memory.add_many([{"content": t, "user_id": "u1", "session_id": "facts"} for t in FACTS[lang]])
    memory.dream(user_id="u1")
    for question in QUESTIONS[lang]:
        top = memory.recall(question, user_id="u1", k=3).hits
        summaries = [h.record.content for h in top if h.record.kind is Kind.SUMMARY]
        chat = [s for s in summaries if any(c in s for c in CHAT[lang])]
        assert not chat, (question, [h.record.content for h in top])


@pytest.mark.parametrize(("lang", "ack"), [("en", 1), ("en", 3), ("zh", 1), ("zh", 3)])
def test_an_acknowledgement_is_archived_not_summarised(memory: DreamMemory, lang: str, ack: int) -> None:
    [record] = memory.add_many([{"content": CHAT[lang][ack], "user_id": "u1", "session_id": "s"}])
    memory.dream(user_id="u1")
    after = memory.get_all(user_id="u1", status=None, limit=10)
    assert [(r.id, r.status) for r in after] == [(record.id, Status.ARCHIVED)]


def test_a_summary_still_answers_a_question_that_shares_its_content(memory: DreamMemory) -> None:
    memory.add_many(
        [
            {"content": "We repainted the garden shed green.", "user_id": "u1", "session_id": "s"},
            {"content": "The new fence posts arrived too.", "user_id": "u1", "session_id": "s"},
        ]
    )
    memory.dream(user_id="u1")
    top = memory.recall("what colour is the garden shed now?", user_id="u1", k=3).hits
    assert [h.record.kind for h in top] == [Kind.SUMMARY]
