"""Distill: decide what each scored record becomes.

* 4-5: kept in full (its importance becomes the score);
* 2-3: compressed, per session and speaker and in groups of ``summary_group_size``,
  into a one-line episodic summary that keeps entities and numbers (a summary of
  tool or assistant turns keeps their role and their instruction flag, never the user's);
* 1: dropped, i.e. archived by :mod:`dreammem.dream.forget`;
* repeated user observations: one pattern record (:mod:`dreammem.dream.patterns`);
* a turn whose explicit content is already held, word for word, by an active semantic
  record written at once by the write path: *migrated* (the turn is archived, the
  semantic record carries it);
* a record in an update relation (a newer value, or one marked possibly outdated,
  :mod:`dreammem.dream.linked`): kept as it is, never summarised.

A summary line holds a short record whole; only a record longer than one line is
compressed to its sentences with protected tokens (:func:`compress_line`).

Every replacement passes the verbatim guard (:mod:`dreammem.dream.guard`); a source
the guard protects stays as it is and is listed in ``guard_kept``. A source an LLM
summary leaves out (its protected tokens or most of its content words missing) is added
to that summary as a verbatim line (listed in its ``verbatim_lines_for``), so nothing
is lost and the group still becomes one record; only a source that even its verbatim
line cannot carry (a long record cut to one line) is kept as it is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel

from dreammem.config import DreamConfig
from dreammem.dream.context import DreamContext
from dreammem.dream.guard import protected_tokens, uncarried_words
from dreammem.dream.linked import LINKED_REASON
from dreammem.dream.llm_calls import StructuredLLM, build_prompt
from dreammem.dream.patterns import Embed, find_patterns
from dreammem.dream.replacement import (
    GuardNote,
    Replacement,
    distilled_record,
    guarded,
    normalize_text,
    speaker_role,
)
from dreammem.dream.score import Scored
from dreammem.errors import LLMError
from dreammem.system_meta import SystemMeta
from dreammem.types import Kind, Layer, MemoryRecord, Role

__all__ = ["DistillPlan", "compress_line", "distill"]

KEEP_FROM = 4
DROP_AT = 1
_SENTENCE = re.compile(r"(?<=[.!?。！？；;])\s*")
_LINE_CHARS = 160
_GROUPS_PER_CALL = 8


@dataclass(slots=True)
class DistillPlan:
    """What distillation decided; nothing is written yet.

    Attributes:
        kept: Records kept in full (scored 4-5, or protected by the guard).
        patterns: Pattern records and the observations they replace.
        summaries: Summary records and the records they compress.
        migrated: ``(turn, semantic record id)``: turns already held by a semantic record.
        dropped: Records scored 1 (to archive).
        guard_kept: Sources the verbatim guard kept, and what a replacement would have lost.
        held: Why a record is kept that its score alone would have summarised, by id.
        notes: Degradations (LLM failures and fallbacks).
    """

    kept: list[Scored] = field(default_factory=list)
    patterns: list[Replacement] = field(default_factory=list)
    summaries: list[Replacement] = field(default_factory=list)
    migrated: list[tuple[MemoryRecord, str]] = field(default_factory=list)
    dropped: list[Scored] = field(default_factory=list)
    guard_kept: list[GuardNote] = field(default_factory=list)
    held: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def compress_line(text: str, max_chars: int = _LINE_CHARS) -> str:
    """One line keeping every sentence that carries a protected token.

    Sentences without numbers, names or limits are dropped when others carry them;
    when none does, the first sentence is kept, cut at a word boundary if too long.
    """
    flat = " ".join(text.split())
    sentences = [s for s in _SENTENCE.split(flat) if s]
    keep = [s for s in sentences if protected_tokens(s)]
    if keep:
        return " ".join(keep)
    first = sentences[0] if sentences else flat
    if len(first) <= max_chars:
        return first
    cut = first[:max_chars]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


def _line(record: MemoryRecord) -> str:
    """One summary line: a short record whole, a longer one compressed.

    Cutting a short record to its sentences with protected tokens would lose what it
    says ("I've given up the chicken salad; lunch is a veggie wrap now").
    """
    role = speaker_role(record).value
    flat = " ".join(record.content.split())
    return f"{role}: {flat if len(flat) <= _LINE_CHARS else compress_line(flat)}"


def distill(
    scored: Sequence[Scored],
    *,
    history: Sequence[MemoryRecord],
    twins: Mapping[str, MemoryRecord],
    embed: Embed | None,
    existing: Sequence[MemoryRecord] = (),
    config: DreamConfig,
    llm: StructuredLLM | None,
    context: DreamContext,
    now: datetime,
    dream_id: str,
    linked: Set[str] = frozenset(),
) -> DistillPlan:
    """Plan what each scored record becomes (see the module docstring).

    Args:
        scored: The active queued records with their scores.
        history: Queued user turns already superseded by a restatement (pattern support).
        twins: Active semantic records written at once from a queued turn, by turn id.
        embed: Embeds observations for pattern similarity (None: exact evidence only).
        existing: Active patterns of earlier dreams (a repeat carries their support on).
        config: Dream settings.
        llm: Improves summaries and pattern phrasing when given.
        context: Anchors the LLM.
        now: Creation time of new records.
        dream_id: Written into new records' system notes.
        linked: Ids of records in an update relation (:func:`dreammem.dream.linked.linked_ids`).
    """
    plan = DistillPlan()
    plan.patterns, notes = find_patterns(
        scored,
        history,
        existing=existing,
        embed=embed,
        config=config,
        llm=llm,
        context=context,
        now=now,
        dream_id=dream_id,
    )
    plan.notes.extend(notes)
    done = {r.id for p in plan.patterns for r in p.replaces}
    low: list[Scored] = []
    for item in scored:
        record = item.record
        if record.id in done:
            continue
        twin = twins.get(record.id)
        if twin is not None and normalize_text(twin.content) == normalize_text(record.content):
            plan.migrated.append((record, twin.id))
        elif item.score >= KEEP_FROM:
            plan.kept.append(item)
        elif item.score <= DROP_AT:
            plan.dropped.append(item)
        elif record.id in linked:
            plan.kept.append(item)
            plan.held[record.id] = LINKED_REASON
        else:
            low.append(item)
    groups = _groups(low, config.summary_group_size)
    proposals = _llm_summaries(groups, llm, context, plan.notes) if llm is not None else {}
    by_id = {s.record.id: s for s in low}
    for n, group in enumerate(groups):
        importance = max(by_id[r.id].score for r in group)
        summary = _summary(
            group, proposals.get(n), plan, importance, now=now, dream_id=dream_id, number=n + 1
        )
        covered = set() if summary is None else {r.id for r in summary.replaces}
        if summary is not None:
            plan.summaries.append(summary)
        plan.kept.extend(by_id[r.id] for r in group if r.id not in covered)
    return plan


def _groups(items: Sequence[Scored], size: int) -> list[list[MemoryRecord]]:
    """Groups of one session and one speaker: a summary never mixes the user's words with others'."""
    by_session: dict[tuple[str, Role], list[MemoryRecord]] = {}
    for item in items:
        key = (item.record.session_id or "", speaker_role(item.record))
        by_session.setdefault(key, []).append(item.record)
    groups: list[list[MemoryRecord]] = []
    for records in by_session.values():
        records.sort(key=lambda r: (r.event_time, r.created_at))
        groups.extend(records[i : i + size] for i in range(0, len(records), size))
    return groups


def _summary(
    group: list[MemoryRecord],
    proposal: str | None,
    plan: DistillPlan,
    importance: int,
    *,
    now: datetime,
    dream_id: str,
    number: int,
) -> Replacement | None:
    """The summary replacing as much of the group as the guard allows (None: keep all)."""
    if proposal is not None:
        ok, notes, invented = guarded(proposal, group, "summary")
        ok, notes = _carried(proposal, ok, notes)
        if ok:
            carried = {r.id for r in ok}
            left = [r for r in group if r.id not in carried]
            if left:
                # What the LLM left out goes in as verbatim lines, not as records of its own.
                proposal = "; ".join([proposal, *dict.fromkeys(_line(r) for r in left)])
                ok, notes, _ = guarded(proposal, group, "summary")
                ok, notes = _carried(proposal, ok, notes)
            verbatim = [r.id for r in left if r in ok]
            return _summary_record(proposal, ok, notes, plan, importance, now, dream_id, verbatim)
        why = f"invents {list(invented)}" if invented else "loses protected tokens of every record"
        plan.notes.append(f"summary {number}: LLM summary {why}; rules summary used")
    content = "; ".join(dict.fromkeys(_line(r) for r in group))
    ok, notes, _ = guarded(content, group, "summary")
    return _summary_record(content, ok, notes, plan, importance, now, dream_id)


def _carried(
    proposal: str, replaceable: list[MemoryRecord], notes: list[GuardNote]
) -> tuple[list[MemoryRecord], list[GuardNote]]:
    """The sources an LLM summary carries; the ones it leaves out are kept (and noted)."""
    carried = []
    for source in replaceable:
        lacking = uncarried_words(source.content, proposal)
        if lacking:
            notes = [*notes, GuardNote(source.id, "summary", lacking)]
        else:
            carried.append(source)
    return carried, notes


def _summary_record(
    content: str,
    replaceable: list[MemoryRecord],
    notes: list[GuardNote],
    plan: DistillPlan,
    importance: int,
    now: datetime,
    dream_id: str,
    verbatim: Sequence[str] = (),
) -> Replacement | None:
    plan.guard_kept.extend(notes)
    if not replaceable:
        return None
    system: SystemMeta = {"dream_id": dream_id, "summarizes": len(replaceable)}
    if verbatim:
        system["verbatim_lines_for"] = list(verbatim)
    record = distilled_record(
        content,
        replaceable,
        layer=Layer.EPISODIC,
        kind=Kind.SUMMARY,
        importance=importance,
        now=now,
        system=system,
    )
    return Replacement(record, tuple(replaceable), tuple(replaceable))


class _SummaryItem(BaseModel):
    id: str
    summary: str


class _SummaryAnswer(BaseModel):
    summaries: list[_SummaryItem]


_INSTRUCTIONS = (
    "Compress each group of conversation records into ONE line. Keep every name, brand, "
    "number, date, amount and limit word (only, must, never, 不超过, ...) exactly as written; "
    "drop small talk; add nothing that is not in the records."
)


def _llm_summaries(
    groups: list[list[MemoryRecord]], llm: StructuredLLM, context: DreamContext, notes: list[str]
) -> dict[int, str]:
    out: dict[int, str] = {}
    for start in range(0, len(groups), _GROUPS_PER_CALL):
        chunk = range(start, min(start + _GROUPS_PER_CALL, len(groups)))
        payload = {
            "groups": [
                {
                    "id": f"g{n + 1}",
                    "records": [{"role": (r.role or Role.USER).value, "text": r.content} for r in groups[n]],
                }
                for n in chunk
            ]
        }
        prompt = build_prompt(
            "summarize",
            _INSTRUCTIONS,
            context.render(),
            payload,
            '{"summaries": [{"id": "g1", "summary": "..."}]}',
        )
        try:
            answer = llm.ask(prompt, _SummaryAnswer, label=f"summaries {start // _GROUPS_PER_CALL + 1}")
        except LLMError as exc:
            notes.append(f"summaries: {exc}; rules summaries used")
            continue
        wanted = {f"g{n + 1}": n for n in chunk}
        for item in answer.summaries:
            text = " ".join(item.summary.split())
            if item.id in wanted and text:
                out[wanted[item.id]] = text
        unknown = sum(1 for item in answer.summaries if item.id not in wanted)
        if unknown:
            notes.append(f"summaries: {unknown} unknown ids ignored")
    return out
