"""Filler and tool-echo detection (dreammem.text.filler), English and Chinese.

The lexicon was designed on the issue's examples and a first list of phrasings; the
``HELD_OUT`` lists were written afterwards and never used to change the lexicon: the
rate on them is what the detector does on phrasings it was not designed on.
"""

from __future__ import annotations

import pytest

from dreammem.text.filler import is_filler, is_tool_echo

DESIGN = [
    "Got it.",
    "Noted.",
    "Understood.",
    "text text text",
    "The weather is nice today.",
    "Thanks a lot!",
    "Sounds good!",
    "👍",
    "好的",
    "收到",
    "明白了",
    "今天天气真不错。",
    "好的，没问题！",
]

HELD_OUT = [
    "Yep yep.",
    "Thanks heaps!",
    "Brilliant, ta.",
    "Good evening to you too",
    "Aha, I see now.",
    "Okay cool, thanks man",
    "Hiya!",
    "Bye for now!",
    "Ooh nice one",
    "Sure sure",
    "Oh wow, lovely.",
    "Right, noted, thanks.",
    "Gorgeous day out there, isn't it?",
    "好嘞，谢谢",
    "收到啦",
    "嗯哼",
    "行吧",
    "晚上好！",
    "拜拜啦",
    "今天天气不错哦",
    "哈哈哈哈",
    "知道了知道了",
    "谢了哈",
    "可以可以",
    "好的没问题",
]

FACTS = [
    "Yes, book the 7am train to Leeds",
    "Thanks, I'm vegetarian now",
    "Noted: the deadline is March 3",
    "哦对了，我的新手机号是13800138000",
    "好的，会议改到周四下午三点",
    "Hi, I'm Dana and I run the Berlin office",
    "Lovely, my daughter starts school in September",
    "ok, order #48213 ships Monday",
    "thanks Tom Becker",
    "I love rainy days",
    "The weather in Hangzhou is nice",
    "Cool, I switched to oat milk",
    "嗯，我换成用飞书了",
    "好的，以后用中文回复我",
    "first note",
    "What did we talk about last time?",
]


@pytest.mark.parametrize("text", DESIGN)
def test_design_examples_are_filler(text: str) -> None:
    assert is_filler(text)


def test_held_out_phrasings_are_mostly_filler() -> None:
    missed = [t for t in HELD_OUT if not is_filler(t)]
    assert 1 - len(missed) / len(HELD_OUT) >= 0.8, missed


@pytest.mark.parametrize("text", FACTS)
def test_a_fact_is_never_filler(text: str) -> None:
    assert not is_filler(text)


def test_long_text_is_not_filler_unless_it_repeats_one_word() -> None:
    assert not is_filler("nice " + "thanks " * 60 + "ok")
    assert is_filler("lorem " * 100)
    assert not is_filler("42 42 42")


@pytest.mark.parametrize(
    "text",
    [
        "Saved memory 0123456789abcdef0123456789abcdef.",
        "Forgot memory 0123456789abcdef0123456789abcdef.",
        "No memories found.",
        "[0123456789abcdef0123456789abcdef] (2024-05-01 10:00 UTC) budget is 5k\n"
        "[abcdefabcdefabcdefabcdefabcdefab] [earlier, possibly outdated] (2024-04-01 09:00 UTC) budget 4k",
    ],
)
def test_dreammem_tool_output_is_an_echo(text: str) -> None:
    assert is_tool_echo(text)


@pytest.mark.parametrize(
    "text", ["Saved the file to disk.", "[draft] (2024) plan", "No memories of that trip"]
)
def test_other_text_is_not_an_echo(text: str) -> None:
    assert not is_tool_echo(text)
