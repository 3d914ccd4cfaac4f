"""Loading LoCoMo conversations for the retrieval benchmark.

LoCoMo (Maharana et al., ACL 2024) is a list of long two-person conversations with
question/answer items whose gold evidence is given as dialog-turn ids
(``"D<session>:<turn>"``). This module turns that JSON into typed, validated values:

- sessions are taken in the order of their number, only those that have turns;
- each turn's time is its session's ``date_time`` (parsed with ``dateparser``);
- evidence ids are normalised (``"D:11:26"``, ``"D30:05"``, several ids in one string)
  and ids that are not turns of the conversation are dropped; questions left with
  no evidence are skipped and counted.

Nothing here depends on which conversations a file holds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dateparser

from dreammem.errors import ValidationError

__all__ = [
    "LocomoConversation",
    "LocomoObservation",
    "LocomoQuestion",
    "LocomoTurn",
    "load_locomo",
    "normalize_evidence",
    "parse_conversation",
    "parse_session_time",
]

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_ID = re.compile(r"D:?(\d+):0*(\d+)")


@dataclass(frozen=True, slots=True)
class LocomoTurn:
    """One dialog turn.

    Attributes:
        dia_id: The turn id, ``"D<session>:<turn>"``.
        speaker: Who said it.
        text: What was said.
        session: The session number (1-based, chronological).
        event_time: The session's time (aware, UTC).
        caption: The BLIP caption of a shared image, if any.
    """

    dia_id: str
    speaker: str
    text: str
    session: int
    event_time: datetime
    caption: str | None = None

    @property
    def content(self) -> str:
        """The memory text: ``"<speaker>: <text>"`` plus the image caption when present."""
        base = f"{self.speaker}: {self.text}"
        return f"{base} [shares an image: {self.caption}]" if self.caption else base


@dataclass(frozen=True, slots=True)
class LocomoQuestion:
    """One QA item with its resolved gold evidence.

    Attributes:
        question: The question text (the recall query).
        category: 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.
        evidence: Gold turn ids, each a turn of the conversation.
        answer: The reference answer (``str()`` of the raw value; may be empty).
    """

    question: str
    category: int
    evidence: tuple[str, ...]
    answer: str = ""


@dataclass(frozen=True, slots=True)
class LocomoObservation:
    """One annotated observation: a statement about a speaker and the turns it rests on.

    LoCoMo's ``observation`` field lists, per session and speaker, facts paraphrased
    from the dialog with the ids of their turns. They are extra (statement -> turn)
    relevance pairs for training a reranker; the benchmark never scores them.
    """

    text: str
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LocomoConversation:
    """One conversation: turns in order, scorable questions, and what was left out.

    Attributes:
        sample_id: The conversation id (the benchmark's ``user_id``).
        turns: Every turn, sessions in order.
        questions: Questions with at least one resolvable evidence turn.
        skipped_questions: Questions left without evidence (not scored).
        dropped_evidence: Evidence ids that did not resolve to a turn.
        observations: Annotated observations with resolvable evidence (may be empty).
    """

    sample_id: str
    turns: tuple[LocomoTurn, ...]
    questions: tuple[LocomoQuestion, ...]
    skipped_questions: int = 0
    dropped_evidence: int = 0
    observations: tuple[LocomoObservation, ...] = ()

    @property
    def reference_time(self) -> datetime:
        """The time of the last session: "now" for temporal questions."""
        return self.turns[-1].event_time


def parse_session_time(text: str) -> datetime:
    """Parse a session timestamp such as ``"1:56 pm on 8 May, 2023"`` as UTC.

    Raises:
        ValidationError: the text is not a date.
    """
    parsed = dateparser.parse(
        text,
        languages=["en"],
        settings={"TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True, "PREFER_DAY_OF_MONTH": "first"},
    )
    if parsed is None:
        raise ValidationError(f"cannot parse session time {text!r}")
    result: datetime = parsed.astimezone(UTC)
    return result


def normalize_evidence(raw: Iterable[Any], known: Iterable[str]) -> tuple[tuple[str, ...], int]:
    """Normalise evidence ids and keep those that are turns of the conversation.

    Args:
        raw: The ``evidence`` list as found in the file.
        known: The conversation's turn ids.

    Returns:
        The resolved ids (in order, without repeats) and how many ids were dropped.
    """
    turns = set(known)
    kept: list[str] = []
    dropped = 0
    for item in raw:
        pieces = [p for p in re.split(r"[;,\s]+", str(item)) if p]
        for piece in pieces:
            match = _EVIDENCE_ID.fullmatch(piece)
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}" if match else None
            if dia_id is None or dia_id not in turns:
                dropped += 1
            elif dia_id not in kept:
                kept.append(dia_id)
    return tuple(kept), dropped


def _sessions(conversation: Mapping[str, Any]) -> list[tuple[int, list[Mapping[str, Any]]]]:
    found = []
    for key, value in conversation.items():
        match = _SESSION_KEY.match(key)
        if match and isinstance(value, list) and value:
            found.append((int(match.group(1)), value))
    return sorted(found, key=lambda item: item[0])


def _turn(raw: Any, session: int, when: datetime, where: str) -> LocomoTurn:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where}: a turn must be an object")
    try:
        dia_id, speaker, text = str(raw["dia_id"]), str(raw["speaker"]), str(raw["text"])
    except KeyError as exc:
        raise ValidationError(f"{where}: a turn lacks {exc.args[0]!r}") from exc
    caption = raw.get("blip_caption")
    return LocomoTurn(dia_id, speaker, text, session, when, str(caption) if caption else None)


def parse_conversation(raw: Any) -> LocomoConversation:
    """Turn one conversation object of a LoCoMo file into a :class:`LocomoConversation`.

    Raises:
        ValidationError: a required field is missing or malformed.
    """
    if not isinstance(raw, Mapping) or not isinstance(raw.get("conversation"), Mapping):
        raise ValidationError("a LoCoMo conversation needs 'sample_id', 'conversation' and 'qa'")
    sample_id = str(raw.get("sample_id") or "")
    if not sample_id:
        raise ValidationError("a LoCoMo conversation lacks 'sample_id'")
    conversation: Mapping[str, Any] = raw["conversation"]
    turns: list[LocomoTurn] = []
    for number, session in _sessions(conversation):
        stamp = conversation.get(f"session_{number}_date_time")
        if not isinstance(stamp, str):
            raise ValidationError(f"{sample_id}: session_{number} has no date_time")
        when = parse_session_time(stamp)
        turns.extend(_turn(t, number, when, f"{sample_id} session_{number}") for t in session)
    if not turns:
        raise ValidationError(f"{sample_id}: no turns")
    known = [t.dia_id for t in turns]
    questions: list[LocomoQuestion] = []
    skipped = dropped = 0
    for item in raw.get("qa") or ():
        if not isinstance(item, Mapping) or "question" not in item or "category" not in item:
            raise ValidationError(f"{sample_id}: a QA item needs 'question' and 'category'")
        evidence, lost = normalize_evidence(item.get("evidence") or (), known)
        dropped += lost
        if not evidence:
            skipped += 1
            continue
        answer = item.get("answer", item.get("adversarial_answer", ""))
        questions.append(LocomoQuestion(str(item["question"]), int(item["category"]), evidence, str(answer)))
    observations = _observations(raw.get("observation"), known)
    return LocomoConversation(sample_id, tuple(turns), tuple(questions), skipped, dropped, observations)


def _observations(raw: Any, known: Sequence[str]) -> tuple[LocomoObservation, ...]:
    """The ``observation`` field's (text, evidence) items; malformed ones are skipped.

    The field is optional and only feeds reranker training, so it is read leniently.
    """
    found: list[LocomoObservation] = []
    sessions = raw.values() if isinstance(raw, Mapping) else ()
    for by_speaker in sessions:
        items = by_speaker.values() if isinstance(by_speaker, Mapping) else ()
        for entries in items:
            for entry in entries if isinstance(entries, list) else ():
                if not isinstance(entry, list) or len(entry) < 2 or not isinstance(entry[0], str):
                    continue
                raw_ids = entry[1] if isinstance(entry[1], list) else [entry[1]]
                evidence, _ = normalize_evidence(raw_ids, known)
                if entry[0].strip() and evidence:
                    found.append(LocomoObservation(entry[0].strip(), evidence))
    return tuple(found)


def load_locomo(path: str | Path, *, limit: int | None = None) -> list[LocomoConversation]:
    """Load a LoCoMo JSON file (a list of conversations).

    Args:
        path: The file.
        limit: Keep only the first ``limit`` conversations.

    Raises:
        ValidationError: the file cannot be read or is not LoCoMo-shaped.
    """
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValidationError(f"cannot read LoCoMo file {p}: {exc}") from exc
    if not isinstance(data, list):
        raise ValidationError(f"{p}: expected a JSON list of conversations")
    items: Sequence[Any] = data if limit is None else data[:limit]
    return [parse_conversation(item) for item in items]
