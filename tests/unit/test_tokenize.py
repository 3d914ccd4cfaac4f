"""The keyword tokenizer that indexing and queries share: Latin words, apostrophes, digits,
accents, Chinese words (jieba's search mode) and, on request, single characters."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import RecallQuery
from dreammem.recall.keyword import KeywordPath
from dreammem.text.tokenize import STOPWORDS, contains_cjk, query_terms, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Don't STOP—it's Bob’s", ["don't", "stop", "it's", "bob's"]),  # a curly apostrophe reads as '
        ("snake_case_name", ["snake", "case", "name"]),  # underscores separate words
        ("order #48213 at 9:30", ["order", "48213", "at", "9", "30"]),
        ("Café Zürich ÅSA", ["café", "zürich", "åsa"]),
        ("  ...  !!!  ", []),
        ("北京大学", ["北京", "大学", "北京大学"]),  # the compound and the words inside it
        ("我 在 Acme 工作", ["我", "在", "acme", "工作"]),
    ],
)
def test_tokens(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_single_characters_are_added_only_when_asked_and_only_once() -> None:
    words = tokenize("北京大学")
    with_chars = tokenize("北京大学", cjk_chars=True)
    assert with_chars[: len(words)] == words
    assert with_chars[len(words) :] == ["北", "京", "大", "学"]
    assert tokenize("我爱我家", cjk_chars=True).count("我") == 1  # a one-character word is not repeated


def test_query_terms_drop_stopwords_and_repeats_in_order() -> None:
    assert query_terms("What is the name of the the dog? Dog!") == ["name", "dog"]
    assert query_terms("the of and") == []
    assert {"the", "of"} <= STOPWORDS and "dog" not in STOPWORDS


def test_contains_cjk_sees_one_ideograph_anywhere() -> None:
    assert contains_cjk("budget 预算 USD") and contains_cjk("丁")
    assert not contains_cjk("Tokyo, こんにちは? no: kana are not ideographs")
    assert not contains_cjk("")


@pytest.mark.parametrize("apostrophe", ["'", "’"])
def test_contractions_are_stopwords_with_either_apostrophe(apostrophe: str) -> None:
    words = ["I'm", "I've", "it's", "don't", "you're", "that's", "we're", "I'll", "I'd", "can't", "aren't"]
    text = " ".join(w.replace("'", apostrophe) for w in words)
    assert query_terms(text) == []
    assert query_terms(f"Melanie{apostrophe}s o{apostrophe}clock") == [
        "melanie's",
        "o'clock",
    ]  # a content head stays


def test_contraction_alone_makes_no_keyword_match(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "kw", embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [{"content": c, "user_id": "u"} for c in ["I’m moving to Lisbon", "Tom said it's raining"]]
        )
        query = RecallQuery(text="I'm sure it’s", user_id="u", limit=5, now=datetime.now(UTC))
        assert KeywordPath(memory.store).search(query) == []
        assert len(KeywordPath(memory.store).search(replace(query, text="I'm in Lisbon"))) == 1
