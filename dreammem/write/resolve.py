"""Write-time conflict resolution beyond slots: newer statements against older ones.

For each new user statement of a write (not a question), :func:`resolve_updates`
takes the user's most similar older active statements (by embedding, from the
caller's ``neighbours``; earlier statements of the same batch count too), keeps those
sharing an attribute family, and asks :func:`dreammem.write.updates.decide`. Of the
candidates that would be replaced, only the best one (most shared topic words, then
most similar) and its copies are superseded; the others, and every unsure one, are
marked possibly outdated instead. When unsure, nothing is superseded.

Only this user's records are ever compared: a candidate of another user is a
:class:`~dreammem.errors.ScopeError`, never a decision.

The older statements come from the store's vector index, less the write's own records
(whether or not a search sees them). Ties go lower row id first on every backend, but
the nearest are exact only where the index is (FAISS below its ANN threshold); Neo4j
5.26's HNSW index can miss one, so at scale the backends may decide a few records
differently (docs/BENCHMARKS.md, session 25 ``parity``).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from collections.abc import Callable, Collection, Container, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from dreammem.errors import ScopeError, ValidationError
from dreammem.system_meta import KEYED_KEY
from dreammem.text.tokenize import contains_cjk
from dreammem.types import Layer, MemoryRecord, Role, Source
from dreammem.write.relations import DECISION_KEY, mark_possibly_outdated
from dreammem.write.rules import is_question
from dreammem.write.sentences import sentence_update, split_sentences, strongest, value_sentences
from dreammem.write.statements import Statement, analyse
from dreammem.write.supersede import superseded
from dreammem.write.updates import Action, Decision, decide

__all__ = [
    "MAX_ANALYSED_CHARS",
    "SAYS_MORE",
    "Candidate",
    "Outcome",
    "analyse_record",
    "applied",
    "is_compact",
    "is_statement",
    "other_fact",
    "resolve_updates",
    "same_speaker",
]

MAX_ANALYSED_CHARS = 2_000
"""Only the start of a longer statement is read (bounded time on huge input)."""

SAYS_MORE = "says_more"
"""The rule name of a replacement held back because the older statement also says something else."""

SAME_SUBJECT: dict[str, float] = {"all-MiniLM-L6-v2": 0.45, "multilingual-e5-small": 0.92}
"""Per embedder, the cosine at which the closest older statement counts as the same subject.

Chosen by five folds on the update benchmark's development cases (shipped dev split and the
independent set, never its held-back part): the lowest similarity at which at most 1 % of
pairs of unrelated cases reach it (MiniLM 0.436-0.469 over the folds, e5-small 0.919-0.922).
An embedder not listed has no such fallback."""

_NEIGHBOURS = 8
_COMPACT_CHARS = 160
_COMPACT_CJK = 60
_SENTENCE_END = re.compile(r"[.!?。！？]+(?:\s|$)|[。！？]")


@dataclass(frozen=True, slots=True)
class Candidate:
    """An older record and its cosine similarity to the new statement."""

    record: MemoryRecord
    similarity: float


@dataclass(frozen=True, slots=True)
class Outcome:
    """One decision: ``old`` replaced by (or possibly outdated by) ``new``."""

    old: MemoryRecord
    new: MemoryRecord
    decision: Decision


Neighbours = Callable[[Sequence[MemoryRecord], npt.NDArray[np.float32], int], Sequence[Sequence[Candidate]]]
"""``(new records, their vectors, k) -> for each record, its user's k most similar stored active records``.

Batch-first: one call per write, so a store can read every candidate in one query."""


def is_statement(record: MemoryRecord) -> bool:
    """True for an active user statement: a user turn or an explicit memory, not a question."""
    return _by_user(record) and not _is_question(record.content)


def _by_user(record: MemoryRecord) -> bool:
    """An active user turn or explicit memory, question or not."""
    said = record.role is Role.USER or record.source is Source.USER_EXPLICIT
    # A keyed entry (its system note, never the caller's metadata): each key is its own value.
    return (
        said
        and KEYED_KEY not in record.system
        and record.is_active
        and record.layer in {Layer.EPISODIC, Layer.SEMANTIC}
    )


def _decidable(record: MemoryRecord) -> bool:
    """A statement, or a paragraph that ends in a question (its other sentences may state things)."""
    return _by_user(record) and (not _is_question(record.content) or not is_compact(record.content))


def same_speaker(a: MemoryRecord, b: MemoryRecord) -> bool:
    """False when both records name different speakers (two people sharing one memory)."""
    left, right = a.speaker, b.speaker
    return left is None or right is None or left.casefold() == right.casefold()


def analyse_record(record: MemoryRecord) -> Statement:
    """The statement a record makes (typed error on empty content)."""
    if not isinstance(record.content, str) or not record.content.strip():
        raise ValidationError("a statement needs non-empty text")
    return _analysed(record.content[:MAX_ANALYSED_CHARS])


# A stored statement is a candidate of every later write about its subject: analyse each text once.
_analysed = functools.lru_cache(maxsize=8192)(analyse)
_is_question = functools.lru_cache(maxsize=8192)(is_question)


def _order(record: MemoryRecord) -> tuple[datetime, datetime]:
    return (record.event_time, record.created_at)


def resolve_updates(
    records: Sequence[MemoryRecord],
    vectors: npt.NDArray[np.float32],
    neighbours: Neighbours,
    *,
    model: str | None = None,
) -> list[Outcome]:
    """Decide, for each new user statement, which older statements it replaces or may replace.

    Args:
        records: The records of one write, in batch order (turns and their semantic twins).
        vectors: Their embeddings, row for row (normalised).
        neighbours: Finds each asking record's most similar stored active records (one call).
        model: The embedder's name: its :data:`SAME_SUBJECT` threshold, if any, is used.

    Returns:
        The decisions that change something (supersede, refine, unsure), in order.

    Raises:
        ScopeError: a candidate belongs to another user than the new statement.
    """
    if len(records) != len(vectors):
        raise ValidationError("one vector per record is required")
    position = {r.id: i for i, r in enumerate(records)}
    # A turn and the semantic record written from it are one statement: decide once, for the semantic one.
    twinned = {r.system.get("from_turn") for r in records if r.layer is Layer.SEMANTIC}
    outcomes: list[Outcome] = []
    seen_old: set[str] = set()
    said = [_decidable(r) for r in records]
    whole = [s and not _is_question(r.content) for r, s in zip(records, said, strict=True)]
    # A stored record is a candidate of many statements of a write: judge it once.
    stated = {r.id: s for r, s in zip(records, said, strict=True)}
    asking = list(_deciding(records, said, twinned))
    # The paragraphs that end in a question are looked up apart: they never take a statement's place.
    batches = [
        _BatchStatements(records, whole),
        _BatchStatements(records, [s > w for s, w in zip(said, whole, strict=True)]),
    ]
    stored = _stored_only(
        neighbours, [records[i] for i, _ in asking], vectors[[i for i, _ in asking]], position
    )
    for (i, new), found in zip(asking, stored, strict=True):
        record = records[i]
        same_statement = {record.id, str(record.system.get("from_turn"))}
        pool = [c for c in found if c.record.id not in position and c.record.id not in same_statement]
        pool += [c for batch in batches for c in _earlier_in_batch(batch, vectors, i, same_statement)]
        for candidate in pool:
            if candidate.record.user_id != record.user_id:
                raise ScopeError("a candidate of another user reached conflict resolution")
        older = [
            c
            for c in pool
            if _stated(c.record, stated)
            and same_speaker(c.record, record)
            and c.record.id not in seen_old
            and _is_older(c.record, record, position)
        ]
        decided = _decide_all(new, older, SAME_SUBJECT.get(model or "", 2.0), record.session_id)
        outcomes += [Outcome(c.record, record, d) for c, d in decided]
        seen_old.update(c.record.id for c, d in decided if d.replaces)
    return outcomes


def _stored_only(
    neighbours: Neighbours,
    asking: Sequence[MemoryRecord],
    rows: npt.NDArray[np.float32],
    written: Collection[str],
) -> list[list[Candidate]]:
    """Each asking record's :data:`_NEIGHBOURS` most similar stored records that this write did not add.

    A search may or may not see the write's own records (Neo4j searches inside the write's
    transaction and its vector index sometimes holds them; FAISS learns them at commit):
    where they took places, those rows are asked again for as many more, so both give
    the same older records.
    """
    found = [list(f) for f in neighbours(asking, rows, _NEIGHBOURS)]
    if len(found) != len(asking):
        raise ValidationError("neighbours must give one list of candidates per record")
    asked = [_NEIGHBOURS] * len(found)
    most = _NEIGHBOURS + len(written)

    def short(n: int) -> bool:  # the search gave all it was asked, and the write's own took places
        return len(found[n]) >= asked[n] and len(found[n]) - _own(found[n], written) < _NEIGHBOURS

    while again := [n for n in range(len(found)) if short(n)]:
        # More than asked, at least twice as many (few rounds), never more than the write could take.
        wanted = {n: min(max(_NEIGHBOURS + _own(found[n], written), 2 * asked[n]), most) for n in again}
        for k in sorted(set(wanted.values())):
            rows_k = [n for n in again if wanted[n] == k]
            for n, more in zip(rows_k, neighbours([asking[n] for n in rows_k], rows[rows_k], k), strict=True):
                found[n], asked[n] = list(more), k
    return [[c for c in f if c.record.id not in written][:_NEIGHBOURS] for f in found]


def _own(found: Iterable[Candidate], written: Container[str]) -> int:
    """How many of these candidates are the write's own records."""
    return sum(1 for c in found if c.record.id in written)


def _stated(record: MemoryRecord, known: dict[str, bool]) -> bool:
    """A statement or a question-ending paragraph (:func:`_decidable`), judged once per record of a write."""
    if record.id not in known:
        known[record.id] = _decidable(record)
    return known[record.id]


def _deciding(
    records: Sequence[MemoryRecord], said: Sequence[bool], twinned: Container[object]
) -> Iterator[tuple[int, Statement]]:
    """The position and statement of each record whose older statements are looked up, in order.

    A statement that states no value of a known attribute family (and has no strong cue)
    cannot change an older one: it is analysed but never looked up. A paragraph is looked
    up when one of its sentences states one (:mod:`dreammem.write.sentences`).
    """
    for i, record in enumerate(records):
        if record.id in twinned or not said[i]:
            continue
        new = analyse_record(record)
        if is_compact(record.content):
            if new.states_value and (new.families or new.strong_cues):
                yield i, new
        elif value_sentences(new.text):
            yield i, new


def is_compact(text: str) -> bool:
    """One targeted statement, not a paragraph: at most two sentences and 160 characters (60 in Chinese).

    Superseding retires everything a record says, so only compact statements are decided
    whole; a long turn is decided sentence by sentence and at most marked possibly outdated
    (:mod:`dreammem.write.sentences`: recall keeps every fact it holds and ranks the newer first).
    """
    limit = _COMPACT_CJK if contains_cjk(text) else _COMPACT_CHARS
    return len(text) <= limit and len(_SENTENCE_END.findall(text.strip().rstrip(".!?。！？"))) <= 1


def other_fact(new: Statement, old_text: str) -> str | None:
    """A sentence of a multi-sentence older statement that states something ``new`` is not about.

    "Hi, I'm Carol." beside "For project updates I prefer email.": "Actually, call me instead
    of emailing" changes the channel, not the name, so superseding the whole older record would
    retire the name too. A sentence counts when it states a value of a known attribute or a name
    (not "we talked about the move").
    """
    sentences = split_sentences(old_text[:MAX_ANALYSED_CHARS])
    for sentence in sentences if len(sentences) > 1 else ():
        part = analyse(sentence)
        about = part.states_value and (part.families or part.names)
        if about and decide(new, part, similarity=0.0, closest=False) is None:
            return sentence
    return None


def _partly(new: Statement, old_text: str, decision: Decision) -> Decision:
    """A replacement of an older statement that also says something else becomes unsure (marked)."""
    if not decision.replaces or (other := other_fact(new, old_text)) is None:
        return decision
    why = f"{decision.reason}; it also says {other!r}, which the newer one does not change"
    return Decision(Action.UNSURE, SAYS_MORE, why, decision.overlap)


def _is_older(old: MemoryRecord, new: MemoryRecord, position: dict[str, int]) -> bool:
    if old.id in position and new.id in position:
        return position[old.id] < position[new.id] and old.event_time <= new.event_time
    return _order(old) < _order(new)


class _BatchStatements:
    """The positions of a write's statements, per user, in batch order (read once per write)."""

    def __init__(self, records: Sequence[MemoryRecord], said: Sequence[bool]) -> None:
        self.records = records
        self._by_user: dict[str, list[int]] = {}
        self._said_at: dict[str, int] = {}
        for j, (record, is_said) in enumerate(zip(records, said, strict=True)):
            if is_said:
                self._by_user.setdefault(record.user_id, []).append(j)
                self._said_at.setdefault(record.id, j)

    def before(self, i: int, leave_out: Iterable[str]) -> list[int]:
        """Where record ``i``'s user's statements before it lie, less those with an id in ``leave_out``."""
        records = self.records
        positions = self._by_user.get(records[i].user_id, [])
        earlier = positions[: bisect.bisect_left(positions, i)]
        # Only the few left-out ids are looked for, not every earlier statement (n²/2 per write).
        if any(self._said_at.get(d, i) < i for d in leave_out):
            left = set(leave_out)
            return [j for j in earlier if records[j].id not in left]
        return earlier


def _earlier_in_batch(
    statements: _BatchStatements,
    vectors: npt.NDArray[np.float32],
    i: int,
    same_statement: set[str],
) -> list[Candidate]:
    """The earlier statements of the batch most similar to record ``i`` (as many as from the store).

    Adding the batch one record at a time would show record ``i`` no more than its
    :data:`_NEIGHBOURS` most similar older records; taking them all made a batch of n
    statements cost n²/2 comparisons.
    """
    earlier = statements.before(i, same_statement)
    if not earlier:
        return []
    similarity = vectors[earlier] @ vectors[i]
    best = sorted(np.argsort(-similarity, kind="stable")[:_NEIGHBOURS].tolist())
    return [Candidate(statements.records[earlier[b]], float(similarity[b])) for b in best]


def _decide_all(
    new: Statement, older: Sequence[Candidate], related_at: float, session: str | None
) -> list[tuple[Candidate, Decision]]:
    """Decisions against each older candidate; only the best replaceable one is replaced.

    Only compact statements are decided whole; when either is a paragraph, its sentences are
    (:func:`~dreammem.write.sentences.sentence_update`: at most a mark, never a supersede), and
    only against a record of another session (``session``: the new record's): within one
    session a paragraph goes on with what was just said, it does not change it.
    """
    analysed = [(c, analyse_record(c.record)) for c in sorted(older, key=lambda c: -c.similarity)]
    # The closest is the closest statement (a question-ending paragraph is decided by sentence only).
    closest = next((s.text for c, s in analysed if not _is_question(c.record.content)), None)
    whole = is_compact(new.text)
    decided = [
        (c, d)
        for c, s in analysed
        if (
            d := decide(
                new,
                s,
                similarity=c.similarity,
                closest=s.text == closest,
                related=c.similarity >= related_at,
            )
            if whole and is_compact(c.record.content)
            else _by_sentence(new, s, c, related_at, session)
        )
        is not None
        and d.action is not Action.COEXIST
    ]
    decided = [(c, _partly(new, c.record.content, d)) for c, d in strongest(decided, lambda c: c.similarity)]
    replaceable = [(c, d) for c, d in decided if d.replaces]
    if not replaceable:
        return decided
    best = max(replaceable, key=lambda cd: (cd[1].overlap, cd[0].similarity))[0].record.content
    out: list[tuple[Candidate, Decision]] = []
    for c, d in decided:
        if d.replaces and c.record.content != best:
            d = Decision(
                Action.UNSURE, "not_the_closest", f"{d.reason}; a closer statement was replaced", d.overlap
            )
        out.append((c, d))
    return out


def _by_sentence(
    new: Statement, old: Statement, candidate: Candidate, related_at: float, session: str | None
) -> Decision | None:
    """The sentence-level decision between a new record and an older one of another session."""
    if session is not None and candidate.record.session_id == session:
        return None
    return sentence_update(
        new.text, old.text, candidate.similarity, related=candidate.similarity >= related_at
    )


def applied(outcome: Outcome, current: MemoryRecord, *, now: datetime) -> MemoryRecord:
    """``current`` (the stored version of ``outcome.old``) with the decision applied.

    A replaced record is superseded by the newer one, with the decision in its system notes
    (``update_decision``); an unsure one stays active, marked possibly outdated.
    """
    note = {
        "action": outcome.decision.action.value,
        "by": outcome.new.id,
        "rule": outcome.decision.rule,
        "reason": outcome.decision.reason,
        "at": now.isoformat(),
    }
    if not outcome.decision.replaces:
        return mark_possibly_outdated(current, outcome.new.id, note)
    return dataclasses.replace(
        superseded(current, outcome.new), system={**current.system, DECISION_KEY: note}
    )
