"""The short-text cache: short texts computed once, long ones every time, answers unchanged."""

from __future__ import annotations

from dreammem.dates.parse import mentions_time
from dreammem.text.short_cache import CACHED_CHARS, short_text_cache
from dreammem.text.speakers import speaker_label


def test_short_texts_are_computed_once_and_long_ones_each_time() -> None:
    calls: list[str] = []

    @short_text_cache
    def length(text: str) -> int:
        calls.append(text)
        return len(text)

    short, long = "Gina: hi", "x" * (CACHED_CHARS + 1)
    assert [length(short), length(short), length(long), length(long)] == [8, 8, len(long), len(long)]
    assert calls == [short, long, long]


def test_cached_answers_are_the_uncached_ones() -> None:
    lines = [
        "We went camping last summer.",
        "The weather was great.",
        "我们上周去了北京",
        "Gina: I fixed it.",
    ]
    padding = " filler" * (CACHED_CHARS // 7 + 1)
    for line in lines:
        assert mentions_time(line) == mentions_time(line + padding)  # the second is never cached
        assert speaker_label(line) == speaker_label(line)
    assert [mentions_time(line) for line in lines] == [True, False, True, False]
    assert speaker_label(lines[3]) == ("gina", "I fixed it.")
