from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dreammem.dream.guard import invented_numbers, missing_tokens, numbers, protected_tokens


def test_english_constraint_tokens() -> None:
    tokens = protected_tokens("Our budget must not exceed 50,000 RMB; open-source stack only.")
    for token in ("50,000", "RMB", "must", "not exceed", "only"):
        assert token in tokens


def test_chinese_constraint_tokens() -> None:
    tokens = protected_tokens("预算不超过人民币五万元，只能使用开源技术栈")
    assert {"不超过", "只能", "五万"} <= set(tokens)


def test_names_dates_ids_and_brands() -> None:
    tokens = protected_tokens("Tom Becker ordered #48213 from DHL on 2026-02-10 for PostgreSQL")
    for token in ("Tom Becker", "#48213", "2026-02-10", "DHL", "PostgreSQL"):
        assert token in tokens


def test_small_talk_has_nothing_to_protect() -> None:
    assert protected_tokens("ok thanks, sounds good") == ()
    assert protected_tokens("好的") == ()


def test_missing_tokens_are_reported() -> None:
    source = "Budget must not exceed 50,000 RMB"
    assert missing_tokens(source, "Budget must not exceed 50,000 RMB per year") == ()
    assert "50,000" in missing_tokens(source, "Budget must not exceed 50 RMB")
    assert "must" in missing_tokens(source, "Budget should not exceed 50,000 RMB")


def test_hard_limits_match_in_any_case_but_numbers_only_whole() -> None:
    assert missing_tokens("open-source stack only", "Only open-source stack") == ()
    assert missing_tokens("50 people", "50,000 people") == ("50",)
    assert missing_tokens("version 2.3", "version 2.30") == ("2.3",)
    assert missing_tokens("meet at 3pm", "Meet at 3pm.") == ()


def test_invented_numbers() -> None:
    assert invented_numbers("Budget 50,000 RMB, 17 items", ["budget is 50,000 RMB"]) == ("17",)
    assert invented_numbers("预算五万元", ["预算不超过人民币五万元"]) == ()
    assert invented_numbers("预算三万元", ["预算不超过人民币五万元"]) == ("三万",)
    assert numbers("call 555-1234 at 9:30") == ("555", "1234", "9:30")


words = st.text(alphabet=st.characters(categories=["L", "N", "Zs", "P"]), max_size=80)


@given(words, words)
def test_a_text_never_loses_tokens_to_itself_plus_more(text: str, extra: str) -> None:
    assert missing_tokens(text, text) == ()
    assert missing_tokens(text, text + " " + extra) == ()
    assert invented_numbers(text, [text]) == ()


@given(st.integers(min_value=10, max_value=10**9))
def test_changing_a_number_is_always_caught(value: int) -> None:
    source = f"The limit is {value:,} USD"
    assert missing_tokens(source, f"The limit is {value + 1:,} USD")
