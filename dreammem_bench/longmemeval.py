"""Loading LongMemEval questions for the retrieval benchmark.

LongMemEval (Wu et al., ICLR 2025) asks one question about a haystack of ~40-58
timestamped user-assistant sessions, most of them distractors. Its JSON (a list,
optionally gzip-compressed) names the evidence sessions (``answer_session_ids``)
and marks evidence turns (``has_answer: true``). This module turns one record
into typed values; nothing here depends on which questions a file holds.

Turn ids are ``"<session id>#<position>"``. Each turn's time is its session's
date plus one second per position, so turns keep their order inside a session.
Question ids ending in ``_abs`` are abstention questions: their answer is not in
the haystack, and they are scored only by how many memories recall returns.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from dreammem.errors import ValidationError

__all__ = [
    "QUESTION_TYPES",
    "LmeQuestion",
    "LmeSession",
    "LmeTurn",
    "load_longmemeval",
    "parse_lme_time",
    "parse_question",
]

QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
_WEEKDAY = re.compile(r"\s*\([A-Za-z]{3}\)\s*")


@dataclass(frozen=True, slots=True)
class LmeTurn:
    """One message of a haystack session.

    Attributes:
        turn_id: ``"<session id>#<position>"``.
        session_id: The session it belongs to.
        role: ``"user"`` or ``"assistant"``.
        content: The message text.
        time: The session's time plus one second per position (aware, UTC).
        has_answer: Whether the data marks it as evidence.
    """

    turn_id: str
    session_id: str
    role: str
    content: str
    time: datetime
    has_answer: bool = False


@dataclass(frozen=True, slots=True)
class LmeSession:
    """One haystack session: its id, time and turns in order."""

    session_id: str
    time: datetime
    turns: tuple[LmeTurn, ...]

    @property
    def text(self) -> str:
        """The whole session as one text (``role: content`` lines), for session-level baselines."""
        return "\n".join(f"{t.role}: {t.content}" for t in self.turns)


@dataclass(frozen=True, slots=True)
class LmeQuestion:
    """One question with its haystack.

    Attributes:
        question_id: The data set's id (``_abs`` suffix: abstention).
        question_type: One of :data:`QUESTION_TYPES`.
        question: The question text (the recall query).
        answer: The reference answer, as text.
        date: When the question is asked ("now" for recall).
        sessions: The haystack, in time order.
        answer_sessions: The evidence session ids.
    """

    question_id: str
    question_type: str
    question: str
    answer: str
    date: datetime
    sessions: tuple[LmeSession, ...]
    answer_sessions: frozenset[str]

    @property
    def abstention(self) -> bool:
        """Whether the answer is absent from the haystack (scored apart)."""
        return self.question_id.endswith("_abs")

    @property
    def turns(self) -> tuple[LmeTurn, ...]:
        """Every turn of the haystack, sessions in time order."""
        return tuple(t for s in self.sessions for t in s.turns)

    @property
    def gold_turns(self) -> frozenset[str]:
        """Ids of the turns marked as evidence."""
        return frozenset(t.turn_id for t in self.turns if t.has_answer)


def parse_lme_time(text: str) -> datetime:
    """Parse ``"2023/05/20 (Sat) 07:34"`` as UTC.

    Raises:
        ValidationError: The text is not such a timestamp.
    """
    try:
        return datetime.strptime(_WEEKDAY.sub(" ", text).strip(), "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
    except ValueError as exc:
        raise ValidationError(f"not a LongMemEval timestamp: {text!r}") from exc


def parse_question(raw: Mapping[str, Any]) -> LmeQuestion:
    """One JSON record as a typed question; sessions sorted by time (stable).

    Raises:
        ValidationError: A field is missing or malformed.
    """
    try:
        ids: Sequence[str] = raw["haystack_session_ids"]
        dates: Sequence[str] = raw["haystack_dates"]
        bodies: Sequence[Sequence[Mapping[str, Any]]] = raw["haystack_sessions"]
        if not len(ids) == len(dates) == len(bodies):
            raise ValidationError(f"{raw['question_id']}: haystack fields differ in length")
        sessions = []
        for session_id, date, body in zip(ids, dates, bodies, strict=True):
            start = parse_lme_time(date)
            turns = tuple(
                LmeTurn(
                    turn_id=f"{session_id}#{i}",
                    session_id=str(session_id),
                    role=str(m["role"]),
                    content=str(m["content"]),
                    time=start + timedelta(seconds=i),
                    has_answer=bool(m.get("has_answer", False)),
                )
                for i, m in enumerate(body)
            )
            sessions.append(LmeSession(str(session_id), start, turns))
        sessions.sort(key=lambda s: s.time)
        return LmeQuestion(
            question_id=str(raw["question_id"]),
            question_type=str(raw["question_type"]),
            question=str(raw["question"]),
            answer=str(raw.get("answer", "")),
            date=parse_lme_time(str(raw["question_date"])),
            sessions=tuple(sessions),
            answer_sessions=frozenset(str(s) for s in raw["answer_session_ids"]),
        )
    except (KeyError, TypeError) as exc:
        raise ValidationError(f"not a LongMemEval question: {exc}") from exc


def load_longmemeval(path: Path) -> list[LmeQuestion]:
    """Every question of a LongMemEval JSON file (``.gz`` read compressed), in file order."""
    opener: Any = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, list):
        raise ValidationError(f"{path}: expected a JSON list of questions")
    return [parse_question(item) for item in data]
