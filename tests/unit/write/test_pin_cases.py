"""Requests to keep something pin; sayings after "Remember," do not (issue 34, item 2).

``pin_cases.txt`` was written before the rule changed and was not tuned on. Its ``dev``
two thirds are scored here with a floor per class and language (the misses are
listed); the ``held`` third was scored once, at the end (docs/BENCHMARKS.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.write.keep_request import asks_to_keep

CASES = Path(__file__).with_name("pin_cases.txt")


def _cases(split: str) -> dict[tuple[str, str], list[str]]:
    groups: dict[tuple[str, str], list[str]] = {}
    for line in CASES.read_text("utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            head, _, text = line.partition("|")
            label, lang, where = head.split()
            if where == split:
                groups.setdefault((label, lang), []).append(text.strip())
    return groups


@pytest.mark.parametrize(("label", "lang"), [("keep", "en"), ("keep", "zh"), ("not", "en"), ("not", "zh")])
def test_dev_cases_score(label: str, lang: str) -> None:
    texts = _cases("dev")[(label, lang)]
    wrong = [t for t in texts if asks_to_keep(t) != (label == "keep")]
    assert len(texts) >= 10 and len(wrong) <= 0.15 * len(texts), wrong


@pytest.mark.parametrize(
    "text",
    [
        "You're welcome! Remember, the most important thing is to enjoy the game.",
        "Remember, patience is a virtue.",
        "Don't forget, hard work always pays off!",
        "记住，平安是福。",
        "别忘了，笑一笑十年少。",
    ],
)
def test_a_saying_after_remember_does_not_pin(text: str) -> None:
    assert not asks_to_keep(text)


@pytest.mark.parametrize(
    "text",
    [
        "Remember: always send invoices to billing@example.com.",
        "Remember, the door code is 2231.",
        "Remember: every purchase order needs a signature from Priya.",
        "Remember, I work nights.",
        "记住：周四的例会取消了。",
        "别忘了，我的车停在B3层。",
    ],
)
def test_a_request_naming_something_particular_pins(text: str) -> None:
    assert asks_to_keep(text)


def test_a_conversation_of_sayings_leaves_no_pinned_memory(memory: DreamMemory) -> None:
    sayings = _cases("dev")[("not", "en")] + _cases("dev")[("not", "zh")]
    memory.add_many([{"content": t, "user_id": "u1"} for t in sayings])
    assert [r.content for r in memory.get_all(user_id="u1", limit=100) if r.pinned] == []


def test_held_cases_score() -> None:
    # Scored once at the end of the change (27 of 28 right: docs/BENCHMARKS.md); the floor
    # only guards against a regression.
    groups = _cases("held")
    wrong = [t for (label, _), texts in groups.items() for t in texts if asks_to_keep(t) != (label == "keep")]
    assert sum(map(len, groups.values())) == 28 and len(wrong) <= 2, wrong
