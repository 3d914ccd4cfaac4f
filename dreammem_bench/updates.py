"""The update benchmark's suite: hand-written cases, split, and played as conversations.

``data/updates_cases.txt`` (written for DreamMem, no licensed data) holds four kinds
of lines: *update* cases (an old statement, a newer one that changes it, a question
whose answer is the newer one), *keep* cases (two compatible statements that must
both stay), questions with *no* relevant memory, and *chat* and *filler* turns.

A stable hash puts 30 % of the update and keep cases and of the no-memory questions
in a held-back split, never used while the write rules were designed. Other sources
(:data:`SOURCES`) were written apart from the rules: their whole file is one split
(``indep``: cases written before the rules of issue 34 were tuned; ``indep-held``: a
third of them, scored once at the end). An update line of theirs may carry a fourth field,
the assistant's echo of the old value ("Got it, email it is."), said right after it. Cases are
played as conversations: each user gets cases of distinct attribute families of one
language; session 1 states the old values among chit-chat, filler and assistant
acknowledgements; session 2 is unrelated chat; session 3, a week later, states the
new values (and the keep cases' second statements); then the questions are asked.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from importlib import resources
from typing import Literal

__all__ = ["SOURCES", "Case", "Conversation", "Suite", "Turn", "build_conversations", "load_suite"]

Split = str
"""``dev`` / ``held`` (the shipped file, by hash) or a source's own split."""

SOURCES: dict[str, tuple[str, Split | None]] = {
    "shipped": ("updates_cases.txt", None),
    "independent": ("updates_independent.txt", "indep"),
    "independent-held": ("updates_independent_held.txt", "indep-held"),
}
"""Source name -> (data file, the split of all its cases; None: by hash)."""
_HELD_SHARE = 30  # percent
_START = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Case:
    """An update (``kind="update"``: ``first`` is old, ``second`` new) or keep case."""

    kind: Literal["update", "keep"]
    lang: str
    family: str
    first: str
    second: str
    question: str
    split: Split
    echo: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn of a benchmark conversation."""

    content: str
    role: str
    session: str
    time: datetime


@dataclass(frozen=True, slots=True)
class Conversation:
    """One user's turns, the cases they state and the no-memory questions asked of them."""

    user_id: str
    lang: str
    turns: tuple[Turn, ...]
    cases: tuple[Case, ...]
    unrelated: tuple[tuple[str, Split], ...]
    asked_at: datetime


@dataclass(frozen=True, slots=True)
class Suite:
    """Everything in the data file."""

    cases: tuple[Case, ...]
    unrelated: tuple[tuple[str, str, Split], ...]  # (lang, question, split)
    chat: dict[str, tuple[str, ...]] = field(default_factory=dict)
    filler: dict[str, tuple[str, ...]] = field(default_factory=dict)


def _split(line: str) -> Split:
    digest = int(hashlib.sha256(line.encode()).hexdigest()[:8], 16)
    return "held" if digest % 100 < _HELD_SHARE else "dev"


def parse_suite(text: str, split: Split | None = None) -> Suite:
    """Read the suite's line format (see the data file's header); ``split``: every case's split."""
    cases: list[Case] = []
    unrelated: list[tuple[str, str, Split]] = []
    chat: dict[str, list[str]] = {}
    filler: dict[str, list[str]] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head, _, rest = line.partition("|")
        tag, *labels = head.split()
        parts = [p.strip() for p in rest.split("|")]
        echoed = tag == "U" and len(parts) == 4
        if tag in {"U", "K"} and len(labels) == 2 and (len(parts) == 3 or echoed):
            kind: Literal["update", "keep"] = "update" if tag == "U" else "keep"
            first, second, question = parts[:3]
            echo = parts[3] if echoed else None
            cases.append(
                Case(kind, labels[0], labels[1], first, second, question, split or _split(line), echo)
            )
        elif tag == "N" and len(labels) == 1 and len(parts) == 1:
            unrelated.append((labels[0], parts[0], split or _split(line)))
        elif tag in {"C", "F"} and len(labels) == 1 and len(parts) == 1:
            (chat if tag == "C" else filler).setdefault(labels[0], []).append(parts[0])
        else:
            raise ValueError(f"updates suite line {number}: cannot read {line!r}")
    return Suite(
        tuple(cases),
        tuple(unrelated),
        {k: tuple(v) for k, v in chat.items()},
        {k: tuple(v) for k, v in filler.items()},
    )


def load_suite(source: str = "shipped") -> Suite:
    """The suite of one source (see :data:`SOURCES`)."""
    name, split = SOURCES[source]
    text = resources.files("dreammem_bench").joinpath(f"data/{name}").read_text("utf-8")
    return parse_suite(text, split)


def _groups(cases: Sequence[Case], size: int, rng: random.Random) -> Iterator[list[Case]]:
    """Cases in groups of distinct families (so no two cases of a user share a subject family)."""
    pending = list(cases)
    rng.shuffle(pending)
    while pending:
        group: list[Case] = []
        for case in list(pending):
            if len(group) < size and all(c.family != case.family for c in group):
                group.append(case)
                pending.remove(case)
        yield group


def build_conversations(
    suite: Suite, *, per_user: int = 6, seed: int = 7, prefix: str = ""
) -> list[Conversation]:
    """Play the suite as conversations (see the module docstring); deterministic for a seed.

    ``prefix`` starts every user id (conversations of several sources in one store).
    """
    rng = random.Random(seed)
    out: list[Conversation] = []
    for lang in sorted({c.lang for c in suite.cases}):
        chat, filler = suite.chat[lang], suite.filler[lang]
        questions = [(q, s) for lg, q, s in suite.unrelated if lg == lang]
        groups = list(_groups([c for c in suite.cases if c.lang == lang], per_user, rng))
        for g, group in enumerate(groups):
            turns: list[Turn] = []
            clock = [_START + timedelta(days=g % 5)]

            def say(
                content: str,
                role: str,
                session: str,
                clock: list[datetime] = clock,
                turns: list[Turn] = turns,
            ) -> None:
                clock[0] += timedelta(minutes=rng.randint(1, 4))
                turns.append(Turn(content, role, session, clock[0]))

            for case in group:
                say(case.first, "user", "s1")
                say(case.echo or rng.choice(filler), "assistant", "s1")
                say(rng.choice(chat), "user", "s1")
                say(rng.choice(filler), "user", "s1")
            clock[0] += timedelta(days=2)
            for line in rng.sample(chat, 3):
                say(line, "user", "s2")
                say(rng.choice(filler), "assistant", "s2")
            clock[0] += timedelta(days=5)
            for case in group:
                say(rng.choice(chat), "user", "s3")
                say(case.second, "user", "s3")
                say(rng.choice(filler), "assistant", "s3")
            out.append(
                Conversation(
                    user_id=f"{prefix}{lang}-{g:02d}",
                    lang=lang,
                    turns=tuple(turns),
                    cases=tuple(group),
                    unrelated=tuple(q for n, q in enumerate(questions) if n % len(groups) == g),
                    asked_at=clock[0] + timedelta(days=1),
                )
            )
    return out
