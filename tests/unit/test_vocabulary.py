"""The shared word lists: one home, and every reader built from it."""

from __future__ import annotations

import re

import pytest

from dreammem.dream.guard import protected_tokens
from dreammem.text.speakers import speaker_label
from dreammem.text.vocabulary import HARD_LIMITS, MONTHS, WEEKDAYS, ZH_WEEKDAYS, word_pattern
from dreammem.types import Kind
from dreammem.write.rules import detect_explicit


def test_word_pattern_matches_latin_words_on_boundaries_and_cjk_anywhere() -> None:
    pattern = re.compile(word_pattern(["only", "can't", "不超过"]), re.IGNORECASE)
    assert pattern.search("Only on Fridays")
    assert pattern.search("I can’t eat nuts")  # typographic apostrophe
    assert pattern.search("I cant eat nuts")
    assert not pattern.search("the onlyfans account")
    assert pattern.search("预算不超过五万")


def test_day_and_month_names_are_complete_and_ordered() -> None:
    assert WEEKDAYS[0] == "monday" and len(WEEKDAYS) == 7
    assert MONTHS[11] == "december" and len(MONTHS) == 12
    assert {"周日", "星期天", "星期一"} <= set(ZH_WEEKDAYS)


@pytest.mark.parametrize("label", ["Monday: ", "March: ", "星期三："])
def test_day_and_month_headers_are_not_speakers(label: str) -> None:
    assert speaker_label(f"{label}team sync at 10")[0] is None


@pytest.mark.parametrize("word", ["mandatory", "prohibited", "forbidden", "至少"])
def test_every_hard_limit_reaches_the_write_path_and_the_dream_guard(word: str) -> None:
    assert word in HARD_LIMITS
    text = f"Smoking is {word} in all 3 buildings." if word.isascii() else f"每周{word}跑步3次。"
    explicit = detect_explicit(text)
    assert explicit is not None and explicit.kind is Kind.CONSTRAINT
    assert word in protected_tokens(text)
