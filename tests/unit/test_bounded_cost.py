"""Every call has a bounded cost: documented input limits, short dateparser spans, a linear guard.

These are bounds, not speed targets (those live in ``benchmarks/bounded_cost.py``):
the limits are typed errors, dateparser's input is measured in characters, and the
two wall-clock checks allow ten times what the linear code needs on a loaded
2-core machine while the quadratic code they replace needed ten times more.
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from dateparser import search

from dreammem import DreamMemory, ValidationError
from dreammem.dates import parse as timeparse
from dreammem.dates.parse import MAX_DATEPARSER_SPANS, SPAN_CHARS, parse_time_query
from dreammem.dream.guard import missing_tokens, protected_tokens

NOW = datetime(2024, 6, 1, 12, tzinfo=UTC)


def _long_text(chars: int, seed: int = 0) -> str:
    rng = random.Random(seed)
    words = ["the", "order", "ships", "on", "May", "3", "paid", "50", "dollars", "last", "week", "Alice"]
    out: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(words) if rng.random() < 0.7 else f"{rng.randint(1, 10**6)}.{rng.randint(0, 99)}"
        out.append(word)
        length += len(word) + 1
    return " ".join(out)[:chars]


def test_limits_are_documented_config_and_typed_errors(memory: DreamMemory) -> None:
    query_limit = memory.config.recall.max_query_chars
    content_limit = memory.config.write.max_content_chars
    assert (query_limit, content_limit) == (8_000, 100_000)
    memory.add("I paid 50 dollars on May 3", user_id="u1")
    assert memory.recall("x" * query_limit, user_id="u1") is not None
    with pytest.raises(ValidationError, match="query has"):
        memory.recall("on May 3 " * 15_000, user_id="u1")  # 135 kB: once ~13 s of dateparser
    with pytest.raises(ValidationError, match="content has"):
        memory.add("x" * (content_limit + 1), user_id="u1")


def test_dateparser_only_sees_short_spans(monkeypatch: pytest.MonkeyPatch) -> None:

    seen: list[int] = []
    real = search.search_dates

    def recording(text: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(len(text))
        return real(text, *args, **kwargs)

    monkeypatch.setattr(search, "search_dates", recording)
    query = _long_text(8_000) + " what did I buy on 7 May 2023?"
    parse_time_query(query, NOW)
    assert seen, "dateparser ran"
    assert len(seen) <= MAX_DATEPARSER_SPANS
    assert max(seen) <= 2 * SPAN_CHARS + 40


def test_short_spans_still_find_the_dates() -> None:
    filler = "blah " * 400
    parsed = parse_time_query(f"{filler} what did I buy on 7 May 2023? {filler}", NOW)
    assert parsed is not None and parsed.window is not None
    assert parsed.window.start == datetime(2023, 5, 7, tzinfo=UTC)
    parsed = parse_time_query(f"what happened last week? {filler}", NOW)
    assert parsed is not None and parsed.window is not None


def test_anchor_is_a_clause_not_a_paragraph() -> None:
    parsed = parse_time_query("what did I say before " + "the trip " * 500, NOW)
    assert parsed is not None and parsed.anchor is not None
    assert len(parsed.anchor) <= timeparse.ANCHOR_CHARS


def test_the_guard_is_linear_in_the_record() -> None:
    # 8,000 distinct numbers in 100 kB: one whole-text regex search per token took ~100 s.
    text = _long_text(100_000, seed=1)
    started = time.perf_counter()
    tokens = protected_tokens(text)
    lost = missing_tokens(text, text[: len(text) // 2])
    assert time.perf_counter() - started < 30
    assert len(tokens) > 5_000 and lost


def test_the_guard_keeps_its_rules() -> None:
    assert "50" not in protected_tokens("the budget is 50,000 USD")
    assert "50,000" in missing_tokens("budget 50,000 USD", "budget 50 USD")
    assert missing_tokens("I must leave by 5", "I MUST leave by 5") == ()
    assert missing_tokens("room A0 on floor 3", "room 0A0 on floor 3") == ("A0",)


def test_a_dream_over_a_record_at_the_limit_is_bounded(memory: DreamMemory) -> None:
    for i in range(5):
        memory.add(f"short turn {i}: the budget is 500 USD", user_id="u1", session_id="s")
    big = memory.add(_long_text(memory.config.write.max_content_chars, seed=2), user_id="u1", session_id="s")
    started = time.perf_counter()
    memory.dream(user_id="u1")
    assert time.perf_counter() - started < 60
    assert memory.get(big.id, user_id="u1").content == big.content
