"""Score: how much each queued record is worth keeping, 1-5.

Three sources, in this order (docs/concepts.md, "Dreaming"):

1. **write-time metadata**: pinned and explicit user statements start at 5, user
   input is high priority (3), assistant and tool output normal (2), errors low (1);
2. **rules**: explicit preferences, constraints and corrections (English and
   Chinese), hard limits ("must", "only", "不超过", ...), key entities (amounts, dates,
   ids, contacts), names, and small talk (acknowledgements and "let me check ..." from
   any speaker score 1: the dream archives them, it never summarises them);
3. **the LLM**, last, only for the records the rules cannot decide, in batches of
   ``llm_batch_size`` (20-30) per call, anchored with the task goal, user profile and
   project stage. The LLM never lowers a high-priority record below 4 (or below its
   rule score when that is lower), and tool output never rises above 3: one-off tool
   output does not become long-term memory by itself.

If the LLM fails (bad JSON, unknown ids, timeout, spent budget) the rule scores stand
and the failure is noted for the report.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from dreammem.dream.context import DreamContext
from dreammem.dream.guard import entities, protected_tokens
from dreammem.dream.llm_calls import StructuredLLM, build_prompt
from dreammem.errors import LLMError
from dreammem.text.entities import KEY_KINDS
from dreammem.text.filler import is_filler, is_tool_echo
from dreammem.text.tokenize import query_terms, tokenize
from dreammem.text.vocabulary import HARD_LIMITS, word_pattern
from dreammem.types import Kind, MemoryRecord, Priority, Role, Source
from dreammem.write.rules import detect_explicit

__all__ = ["Scored", "is_noise", "rule_score", "score"]

log = logging.getLogger(__name__)

TOOL_CAP = 3
HIGH_FLOOR = 4

_FILLER = re.compile(
    r"^\s*(?:sure|of course|certainly|happy to help|glad to help|let me (?:check|see|look)|"
    r"here(?:'s| is| are)|i can help|anything else|you'?re welcome|no problem|one moment|got it|"
    r"好的|没问题|马上|稍等|请稍等|还有什么|我?(?:看|查|找)一下)",
    re.IGNORECASE,
)
_FILLER_MAX_TOKENS = 14
_USER_FILLER_TERMS = 1
_GLUE = " ,.;:!?，。；：！？、"
_HARD_LIMIT = re.compile(word_pattern(HARD_LIMITS), re.IGNORECASE)
_META_REASONS = frozenset({"pinned or explicit", "user input", "error output", "normal priority"})


@dataclass(frozen=True, slots=True)
class Scored:
    """A record with its score and how the score was reached.

    Attributes:
        record: The queued record.
        score: 1 (noise) to 5 (keep verbatim).
        basis: ``metadata``, ``rules`` or ``llm``.
        reason: A short human-readable why.
    """

    record: MemoryRecord
    score: int
    basis: str
    reason: str


def is_noise(text: str) -> bool:
    """True for small talk, acknowledgements and tool echoes with nothing worth remembering.

    The same test keeps them out of recall (:mod:`dreammem.text.filler`).
    """
    return is_filler(text) or is_tool_echo(text)


def _is_filler_turn(record: MemoryRecord) -> bool:
    """A short acknowledgement or "let me check" with nothing protected in it.

    From the user it may name one thing besides ("Let me check my calendar.", "我看一下日历。"):
    an opener followed by more content ("Sure, I'd love sushi tonight") is not filler.
    """
    text = record.content
    opener = _FILLER.match(text)
    if opener is None or len(tokenize(text, cjk_chars=False)) > _FILLER_MAX_TOKENS or protected_tokens(text):
        return False
    rest = text[opener.end() :]
    while (more := _FILLER.match(rest.lstrip(_GLUE))) is not None:  # "稍等，我查一下"
        rest = rest.lstrip(_GLUE)[more.end() :]
    return record.role is not Role.USER or len(query_terms(rest)) <= _USER_FILLER_TERMS


def _metadata_score(record: MemoryRecord) -> tuple[int, str]:
    if record.pinned or record.source is Source.USER_EXPLICIT:
        return 5, "pinned or explicit"
    if record.priority is Priority.HIGH:
        return 3, "user input"
    if record.priority is Priority.LOW:
        return 1, "error output"
    return 2, "normal priority"


def rule_score(record: MemoryRecord) -> tuple[int, str, bool]:
    """Metadata then rules: ``(score, reason, certain)``.

    ``certain`` records are not sent to the LLM.
    """
    base, reason = _metadata_score(record)
    if base == 5:
        return 5, reason, True
    text = record.content
    explicit = detect_explicit(text) if record.role in (Role.USER, None) else None
    if explicit is not None:
        if explicit.pinned or explicit.correction or explicit.kind is Kind.CONSTRAINT:
            return 5, f"explicit {'correction' if explicit.correction else explicit.kind.value}", True
        return 4, f"explicit {explicit.kind.value}", True
    if is_noise(text):
        return 1, "small talk", True
    if record.role is Role.USER and _HARD_LIMIT.search(text):
        return max(base, 4), "hard limit", True
    if _is_filler_turn(record):
        return 1, "filler", True
    kinds = {e.kind for e in entities(text)}
    if record.role is Role.TOOL or record.priority is Priority.LOW:
        bumped = min(base + (1 if protected_tokens(text) else 0), TOOL_CAP)
        return bumped, "tool output" if record.role is Role.TOOL else reason, False
    if kinds & KEY_KINDS:
        return max(base, 4), "key entity", record.priority is Priority.HIGH
    if "name" in kinds:
        return max(base, 3), "names", False
    return base, reason, False


class _ScoreItem(BaseModel):
    id: str
    score: int = Field(ge=1, le=5)


class _ScoreAnswer(BaseModel):
    scores: list[_ScoreItem]


_INSTRUCTIONS = (
    "You consolidate the long-term memory of an AI assistant. Rate how much each record is "
    "worth keeping for this user, 1-5: 5 = hard constraint, commitment or key fact (keep "
    "verbatim); 4 = useful fact, preference or event; 3 = some value; 2 = minor detail; "
    "1 = noise or small talk. Rate every id exactly once."
)


def score(
    records: Sequence[MemoryRecord],
    *,
    llm: StructuredLLM | None,
    context: DreamContext,
    batch_size: int,
) -> tuple[list[Scored], list[str]]:
    """Score records: metadata and rules, then the LLM for the undecided ones.

    Returns:
        The scored records (in input order) and notes on anything that degraded.
    """
    scored: list[Scored] = []
    undecided: list[int] = []
    for n, record in enumerate(records):
        value, reason, certain = rule_score(record)
        scored.append(Scored(record, value, "rules" if reason not in _META_REASONS else "metadata", reason))
        if not certain:
            undecided.append(n)
    notes: list[str] = []
    if llm is None or not undecided:
        return scored, notes
    for batch_no, start in enumerate(range(0, len(undecided), batch_size), 1):
        batch = undecided[start : start + batch_size]
        if llm.exhausted:
            notes.append(f"score: LLM budget spent; {len(undecided) - start} records kept rule scores")
            break
        try:
            answers = _ask(llm, [scored[i] for i in batch], context, batch_no)
        except LLMError as exc:
            notes.append(f"score batch {batch_no}: {exc}; rule scores used")
            continue
        local = {f"r{k}": i for k, i in enumerate(batch, 1)}
        unknown = [a.id for a in answers if a.id not in local]
        seen: set[str] = set()
        for answer in answers:
            index = local.get(answer.id)
            if index is None or answer.id in seen:
                continue
            seen.add(answer.id)
            scored[index] = _apply_llm(scored[index], answer.score)
        if unknown:
            notes.append(f"score batch {batch_no}: {len(unknown)} unknown ids ignored")
        if len(seen) < len(batch):
            notes.append(f"score batch {batch_no}: {len(batch) - len(seen)} records kept rule scores")
    return scored, notes


def _ask(llm: StructuredLLM, items: list[Scored], context: DreamContext, batch_no: int) -> list[_ScoreItem]:
    payload = {
        "records": [
            {"id": f"r{k}", "role": (s.record.role or Role.USER).value, "text": s.record.content}
            for k, s in enumerate(items, 1)
        ]
    }
    prompt = build_prompt(
        "score", _INSTRUCTIONS, context.render(), payload, '{"scores": [{"id": "r1", "score": 3}]}'
    )
    return llm.ask(prompt, _ScoreAnswer, label=f"score batch {batch_no}").scores


def _apply_llm(current: Scored, value: int) -> Scored:
    record = current.record
    final = value
    if record.priority is Priority.HIGH:
        final = max(value, min(current.score, HIGH_FLOOR))
    if record.role is Role.TOOL:
        final = min(final, TOOL_CAP)
    reason = "llm" if final == value else f"llm said {value}, kept {final}"
    return Scored(record, final, "llm", reason)
