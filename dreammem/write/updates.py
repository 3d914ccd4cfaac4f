"""Does a newer statement replace an older one? Supersede, refine, coexist or unsure.

Pure functions over two :class:`~dreammem.write.statements.Statement` values and
their embedding similarity; no I/O and no model call. Only two statements that state a
value are compared (:attr:`~dreammem.write.statements.Statement.states_value`: not a report of
talk or thought about a topic, not an undecided one). The decision needs the same
subject first: a shared attribute family, the same holder (the user, or the same
"my sister"), and shared topic words, or the closest older statement of that family
when the newer one carries an explicit change cue. Then:

* two reports of events (past tense, no cue; or a past report after a statement that holds
  no standing value) are **not** about one value: nothing is decided;
* two statements naming different items (codes "LH825" / "LH445", numbers "order 48221" /
  "order 48222" or "item 85" / "item 160" without a change cue, or a narrow pair whose
  differing word comes with a different number, time or day: "the laptop budget is 1,500" /
  "the monitor budget is 400") are two values side by side, without a change cue: nothing is decided;
* two statements under different qualifiers ("email for invoices" / "for urgent issues, call
  me", "on short flights" / "for long-haul flights") keep both (**coexist**), cue or not;
* an additive cue ("also", "too", "也", "还有") keeps both (**coexist**);
* a change cue ("actually", "switched", "moved", "改成", "不再", "别…了") **supersedes**;
* the same topic words with another number, time or day and a "now"/"现在" cue,
  shared topic words with such a cue, or a narrow statement that differs only in its value where one
  value is current at a time (a city, an employer, a name) **supersede** it;
* an older statement whose topic words and values all recur in a newer, longer one is
  **refined** by it (superseded: the newer one says all of it);
* anything else about the same subject (a bare negation included) is **unsure**:
  both stay active and the older one is marked possibly outdated (see
  :mod:`dreammem.write.relations`), for recall to rank the newer one first and mark the
  older one, and for a dream's LLM to judge.

The subject test has a measured fallback: the closest older statement whose embedding
similarity reaches the embedder's same-subject threshold (``related``, see
:data:`dreammem.write.resolve.SAME_SUBJECT`) is about the same subject when the newer one
carries a change cue, though no family or two topic words tie them ("Ship my orders with
DHL." / "From now on use UPS for my shipments").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from dreammem.write.pairs import shared_names, two_items, two_scopes
from dreammem.write.statements import SINGLE_VALUED, Statement

__all__ = ["Action", "Decision", "decide"]


class Action(StrEnum):
    """What the write path does with an older statement."""

    SUPERSEDE = "supersede"
    REFINE = "refine"
    COEXIST = "coexist"
    UNSURE = "unsure"


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision and why: ``rule`` is a stable name, ``reason`` a readable sentence."""

    action: Action
    rule: str
    reason: str
    overlap: int = 0

    @property
    def replaces(self) -> bool:
        """True when the older statement stops being current."""
        return self.action in {Action.SUPERSEDE, Action.REFINE}


def _different_holder(new: Statement, old: Statement) -> bool:
    if new.holders and old.holders:
        return not new.holders & old.holders
    if not (new.holders or old.holders):
        return False
    held, other = (new, old) if new.holders else (old, new)
    # "My parents moved" says nothing about "I live in Boston", and the reverse.
    return other.first_person or _two_named_people(held, other)


def _two_named_people(held: Statement, other: Statement) -> bool:
    """News about one named person beside news opening with another's name.

    "Jonas moved to Berlin" says nothing about "Chen recommends the shop in Osaka": the first
    is Jonas's (a name before a past-tense verb), the second opens with a name and never names Jonas.
    """
    if held.opener is None or other.opener is None:
        return False
    return not _named(other) & _words(held.holders)


def _named(statement: Statement) -> frozenset[str]:
    """The words of every name a statement gives, opening it or inside it."""
    return _words(statement.names | statement.lead_names)


def _words(names: Iterable[str]) -> frozenset[str]:
    return frozenset(word for name in names for word in name.split())


def _events(new: Statement, old: Statement, *, changed: bool) -> bool:
    """Two reports of things that happened: neither is a value the other replaces.

    "Played chess with Ana after dinner" does not update "Dinner with Ana at the Thai
    place". What happened stays true: a past report is outdated only by an explicit
    change or correction cue, and a past report replaces only a standing value (present
    tense, habit, preference: "I live in Boston", "the standup is at 9:30").
    """
    return (old.past_report and not changed) or (new.past_report and not old.standing)


# A topic word that is itself a stated value: a number, a numeral, a day ("friday", "一万元").
_VALUE_WORD = re.compile(r"[\d零一二两三四五六七八九十百千万]|day$")


def _item_words(statement: Statement) -> frozenset[str]:
    return frozenset(t for t in statement.topics if t not in statement.values and not _VALUE_WORD.search(t))


def _second_item(new: Statement, old: Statement) -> bool:
    """Both name the same kind of thing and each a word of its own: "the report" / "the slides"."""
    new_words, old_words = _item_words(new), _item_words(old)
    return bool(new_words & old_words and new_words - old_words and old_words - new_words)


def _two_ids(new: Statement, old: Statement) -> bool:
    """Each names its own number or code ("order 48221" / "order 48222", "item 85" / "item 160")."""
    return bool(new.ids and old.ids and new.ids != old.ids)


def decide(
    new: Statement, old: Statement, *, similarity: float, closest: bool, related: bool = False
) -> Decision | None:
    """Whether ``new`` (the newer statement) replaces ``old``.

    Args:
        new: The newer statement.
        old: An older statement of the same user.
        similarity: Their embedding cosine similarity (for the reason).
        closest: ``old`` is the most similar older statement sharing a family with ``new``.
        related: Their similarity reaches the embedder's measured same-subject threshold.

    Returns:
        The decision, or None when the two are not about the same subject.
    """
    if old.episode or not (new.states_value and old.states_value):
        return None  # "the traffic was terrible today" is an event, "we talked about X" no value
    if not closest and not new.families & old.families and not (new.first_person and shared_names(new, old)):
        return None  # the subject test below, first: most older candidates share no family or name
    # A cue both statements carry ("moved" / "moved") describes the subject, not a change.
    cues = [c for c in new.strong_cues if c not in old.strong_cues]
    mild = new.mild_cue and not old.mild_cue
    items = two_items(new, old) or _two_ids(new, old)
    if _events(new, old, changed=bool(cues or mild)) or (items and not (cues or mild)):
        return None
    shared = sorted(new.families & old.families)
    # A shared name ("Anna") ties two statements only when the newer one is the user's own
    # ("Anna retired; my lawyer is now ..."), not news about others ("Ana sold the router in Quito",
    # "Tom Becker wants the pipeline migrated" after "My manager is Tom Becker"): then the name's
    # words are not shared topic words either.
    names = sorted(shared_names(new, old)) if new.first_person else []
    name_words = frozenset() if new.first_person else _words(new.names | old.names)
    overlap = sorted(new.topics & old.topics - name_words)
    by_meaning = closest and related and bool(cues or mild)
    if not shared and not names and not (len(overlap) >= 2 and closest) and not by_meaning:
        return None  # no common attribute family: only a close statement sharing two topic words
    subject = "/".join(shared or names or overlap[:1]) or "closest by meaning"
    about = f"same subject ({subject}; similarity {similarity:.2f}"
    about += f"; shared words {', '.join(overlap[:4])})" if overlap else "; closest older statement)"
    if new.speaker and old.speaker and new.speaker != old.speaker:
        # Two speakers of a transcript: what Gina says does not outdate what Jon said.
        why = f"{about}, but said by {new.speaker}, not {old.speaker}"
        return Decision(Action.COEXIST, "different_speaker", why, len(overlap))
    if _different_holder(new, old):
        return Decision(Action.COEXIST, "different_holder", f"{about}, but about someone else", len(overlap))
    if not overlap and not names and not (closest and (cues or mild)):
        return None
    if new.text.strip() == old.text.strip():
        return None  # a restatement: nothing to decide
    if two_scopes(new, old):
        cases = f"{', '.join(sorted(old.scope))} / {', '.join(sorted(new.scope))}"
        why = f"{about}; each holds for its own case ({cases})"
        return Decision(Action.COEXIST, "different_scope", why, len(overlap))
    if new.topics == old.topics and not cues and not new.negated:
        if new.values == old.values:
            return None
        # The same words with another number, time or day: "standup at 9:30" / "standup at
        # 10:15" with a "now" cue is a change; without one it may be a second item ("note 7",
        # "note 8"), so it is only marked.
        action = Action.SUPERSEDE if mild else Action.UNSURE
        why = f"{about}; the same statement with another value"
        return Decision(action, "different_value", why, len(overlap))
    if new.additive:
        return Decision(Action.COEXIST, "additive_cue", f"{about}; the newer one adds to it", len(overlap))
    if cues and (overlap or names or shared or by_meaning):
        cue = cues[0]
        return Decision(Action.SUPERSEDE, "change_cue", f"{about}; change cue {cue!r}", len(overlap))
    # Only a value differs: "I live in Boston" / "I live in Denver", not "the report is
    # due Friday" / "the slides are due Wednesday" (two subjects that share a word). When the
    # numbers, times or days differ too, the differing word names a second item with its own
    # value ("the laptop budget is 1,500 dollars" / "the monitor budget is 400 dollars").
    narrow = bool(overlap) and len(old.topics - new.topics) <= 1 and len(new.topics - old.topics) <= 1
    own_values = bool(new.values and old.values and new.values != old.values)
    if (overlap and mild) or (narrow and not own_values and set(shared) & SINGLE_VALUED):
        why = "a 'now' cue" if mild else "one current value"
        return Decision(
            Action.SUPERSEDE, "different_value", f"{about}; a different value with {why}", len(overlap)
        )
    if own_values and _second_item(new, old):
        return None  # "the slides are due Wednesday" beside "the report is due Friday"
    if old.topics and old.topics < new.topics and old.values <= new.values:
        why = f"{about}; the newer one says all of it and more"
        return Decision(Action.REFINE, "refinement", why, len(overlap))
    rule = "negation" if new.negated and not old.negated else "same_subject"
    return Decision(Action.UNSURE, rule, f"{about}; no clear change cue", len(overlap))
