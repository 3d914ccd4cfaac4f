"""A cache for text functions asked of the same short texts again and again.

A recall asks the same questions of its candidates' texts (who is speaking, whether a
time is mentioned) on several paths, and the same stored turns come back query after
query. Short texts are cached by value; a long one (a document) is computed each time
so that the cache stays small (8,192 texts of at most 1,000 characters: a few MB).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

__all__ = ["CACHED_CHARS", "short_text_cache"]

T = TypeVar("T")

CACHED_CHARS = 1_000
"""Texts up to this long are cached."""


def short_text_cache(function: Callable[[str], T]) -> Callable[[str], T]:
    """``function`` of a text, cached for texts of at most :data:`CACHED_CHARS` characters.

    The function must depend on the text alone (and return a value that callers do not
    mutate): a cached answer is returned as is.
    """
    cached = lru_cache(maxsize=8192)(function)

    @wraps(function)
    def call(text: str) -> T:
        return cached(text) if len(text) <= CACHED_CHARS else function(text)

    return call
