"""The literal gate skips a pattern only when the pattern finds nothing, and analysis is unchanged by it.

The patterns checked are every compiled pattern of the rule modules (most written before the
gate and not designed for it), on texts from the update benchmark's cases, the throughput
benchmark's turns, hand-written phrasings and generated ones built from the patterns' own words.
"""

from __future__ import annotations

import random
import re
import string
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreammem.dates import parse as timeparse
from dreammem.dates import rules as timerules
from dreammem.dates import words as timewords
from dreammem.text import entities, filler, speakers
from dreammem.text.literal_gate import LiteralGate
from dreammem.write import rules, statements, updates
from dreammem.write.rules import detect_explicit
from dreammem.write.statements import analyse
from dreammem_bench.throughput import synthetic_turns

CASES = Path(__file__).resolve().parents[2] / "dreammem_bench/data/updates_cases.txt"
RULE_MODULES: tuple[ModuleType, ...] = (
    statements, rules, updates, entities, filler, speakers, timeparse, timerules, timewords
)  # fmt: skip

PHRASINGS = [
    "Please E-MAIL me, not gmail; my Inbox is full.",
    "Text me at 7pm or 7 PM or 19:30, whichever.",
    "I'm switching to VS Code (vscode) from Vim.",
    "We've got a table for 6 people at 8:15.",
    "Budget: $2,500 max, or 3k EUR; no more than €900.",
    "The Q3 report is due by the end of March, in PDF or Excel.",
    "My sister's kids moved to Lisbon; my brother's dog didn't.",
    "I was brought up in Leeds, but I live in Leeds no longer.",
    "Ask me about the budget first.",
    "We talked about remote work over lunch, and I prefer the office now.",
    "Haven't decided on the hotel yet; still weighing the Hilton.",
    "Omar sold the guitar yesterday.",
    "Call me Bob. Also, call me instead of emailing.",
    "flight LH825 then INV-3665 and A320",
    "I'd rather not; I'll stop drinking coffee after all.",
    "Neighbourhood, neighborhood, neighbours and o'clock stand-up",
    "EXCELLENT pppt qqq pdf's",
    "don't doesn't won't can't isn't aren't",
    "",
    " ",
    "a",
    "12",
    "we're off to the races!!!",
    "The Kelvin sign K and the long s ſ are not ASCII.",
    "我上周改成了每天早上喝咖啡",
    "Café in Zürich, naïve résumé",
]


def _case_texts() -> list[str]:
    out = []
    for line in CASES.read_text(encoding="utf-8").splitlines():
        if line.startswith("#") or "|" not in line:
            continue
        out += [part.strip() for part in line.split("|")[1:]]
    return out


def _rule_patterns() -> list[re.Pattern[str]]:
    found: dict[int, re.Pattern[str]] = {}
    for module in RULE_MODULES:
        for value in vars(module).values():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                found[id(value)] = value
    for pattern in statements._patterns().values():  # noqa: SLF001 - the family patterns, built lazily
        found[id(pattern)] = pattern
    return list(found.values())


PATTERNS = _rule_patterns()
GATE = LiteralGate(PATTERNS)


def _vocabulary() -> list[str]:
    """Words of the patterns themselves, so that generated texts often come close to matching."""
    words: set[str] = set()
    for pattern in PATTERNS:
        words.update(re.findall(r"[A-Za-z][A-Za-z']{1,12}", pattern.pattern))
    return sorted(words)


VOCABULARY = _vocabulary()


def _generated(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    joins = [" ", "  ", ", ", "-", "'", ": ", "\t", "(", ") ", "$", "#", ""]
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randrange(1, 12)):
            roll = rng.random()
            if roll < 0.6:
                word = rng.choice(VOCABULARY)
                word = rng.choice(
                    [word, word.upper(), word.title(), word + rng.choice(["s", "ed", "ing", "er"])]
                )
            elif roll < 0.8:
                word = str(rng.randrange(0, 3000)) + rng.choice(["", "k", "pm", ":30", " am"])
            else:
                word = "".join(rng.choice(string.ascii_letters) for _ in range(rng.randrange(1, 8)))
            parts += [word, rng.choice(joins)]
        out.append("".join(parts))
    return out


TEXTS = list(dict.fromkeys(PHRASINGS + _case_texts() + synthetic_turns(400) + _generated(1500, seed=3)))


def _skipped_but_matching(texts: list[str]) -> list[tuple[str, str]]:
    wrong = []
    for text in texts:
        view = GATE.view(text)
        wrong += [(p.pattern[:60], text) for p in PATTERNS if not view.may_match(p) and p.search(text)]
    return wrong


def test_the_gate_reads_most_rule_patterns() -> None:
    readable = [p for p in PATTERNS if not GATE.may_match(p, "zz")]
    assert len(readable) >= len(PATTERNS) * 0.6


def test_a_skipped_pattern_never_matches() -> None:
    assert _skipped_but_matching(TEXTS) == []


def test_the_gate_skips_most_searches_on_the_benchmark_turns() -> None:
    turns = synthetic_turns(200)
    run = sum(GATE.may_match(p, t) for t in turns for p in PATTERNS)
    assert run < 0.5 * len(turns) * len(PATTERNS)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY) | st.text(alphabet=string.printable, max_size=6), max_size=10))
def test_a_skipped_pattern_never_matches_generated_texts(parts: list[str]) -> None:
    text = " ".join(parts)
    assert _skipped_but_matching([text, text.upper(), text.replace(" ", "")]) == []


def test_a_text_that_is_not_ascii_runs_every_pattern() -> None:
    view = GATE.view("Café au lait")
    assert view.possible is None
    assert all(view.may_match(p) for p in PATTERNS)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?i)cat",  # inline flags
        r"(a)\1",  # a back reference
        r"\w+",  # no literal at all
        r"[^a]bc|.",  # one branch with no literal
        "\u212a",  # a non-ASCII letter that IGNORECASE matches with "k"
        r"(?#comment)x",
        r"(?x: c a t )",  # verbose: a space is no literal
    ],
)
def test_syntax_the_gate_does_not_read_always_runs(pattern: str) -> None:
    compiled = re.compile(pattern, re.IGNORECASE)
    gate = LiteralGate([compiled])
    assert gate.may_match(compiled, "nothing of it here")


@pytest.mark.parametrize(
    ("pattern", "skips", "runs"),
    [
        (r"\bcat\b", ["concatenate", "dog"], ["Cat", "a cat.", "cat's"]),
        (r"\b(?:e-?mail|g?mail)(?:s|ing)?\b", ["male", "emai l"], ["e-mail", "Gmail", "mail"]),
        (r"\d{1,2}:\d{2}", ["1030", "at ten"], ["10:30"]),
        (r"\b(?:my|our)\s+(sister|brother)\b", ["my sis", "mysister"], ["our  Brother"]),
        (r"[$€£¥]\s?\d+", ["100 USD", "USD only"], ["$ 100"]),
        (r"改成|换了", ["switched"], []),
        (r"(?<!\bwas )\bbrought\s+up\b", ["bring", "brough"], ["brought up"]),
        (r"\bnot \w+ anymore\b", ["no more", "any more"], ["not here anymore"]),
        (r"\b\d{4}[-/.]\d{1,2}\b", ["2024 - 05", "in 2024 ."], ["2024-05", "on 2024/5/1"]),
    ],
)
def test_what_the_gate_skips(pattern: str, skips: list[str], runs: list[str]) -> None:
    compiled = re.compile(pattern, re.IGNORECASE)
    gate = LiteralGate([compiled])
    for text in skips:
        assert not gate.may_match(compiled, text), text
        assert compiled.search(text) is None, text
    for text in runs:
        assert gate.may_match(compiled, text), text


def test_a_pattern_the_gate_was_not_given_always_runs() -> None:
    other = re.compile("xyz")
    assert GATE.view("abc").may_match(other)


def test_analysis_with_the_gate_is_analysis_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = TEXTS[:2500]
    gated = [analyse(t) for t in texts]
    monkeypatch.setattr(statements, "_gate", lambda: LiteralGate([]))  # gates nothing: every pattern runs
    assert [analyse(t) for t in texts] == gated


def test_explicit_memories_with_the_gate_are_those_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    gated = [detect_explicit(t) for t in TEXTS]
    monkeypatch.setattr(rules, "_GATE", LiteralGate([]))
    assert [detect_explicit(t) for t in TEXTS] == gated
