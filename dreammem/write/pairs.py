"""How two statements relate beyond their subject: their own items, their own scopes, names they share."""

from __future__ import annotations

from dreammem.write.statements import Statement

__all__ = ["shared_names", "two_items", "two_scopes"]


def two_items(new: Statement, old: Statement) -> bool:
    """Each statement names its own item by a code the other lacks ("flight LH825" / "flight LH445")."""
    return bool(new.items and old.items and not new.items & old.items)


def two_scopes(new: Statement, old: Statement) -> bool:
    """Each statement holds under a qualifier of its own: "email for invoices" / "for urgent issues, call me".

    A scope is the common-noun phrase after "for", "during", "when" or "if", or after "on",
    "at" or "in" opening a clause ("On short flights, ...", "At the office I ..."); a
    capitalised name there is a value ("for Globex"), a time or number is a schedule. Both
    need one, and each a word the other statement does not use.
    """
    return bool(old.scope - new.topics and new.scope - old.topics)


def shared_names(new: Statement, old: Statement) -> frozenset[str]:
    """Names both statements give; one opening a sentence counts when the other names it inside one.

    "Anna retired; ..." after "... I talk to Anna at Reed LLP": the other statement shows "Anna"
    is a name, not a capitalised first word. Two sentence openers alone ("Caroline: ...") tie nothing.
    """
    return (new.names & old.names) | (new.lead_names & old.names) | (new.names & old.lead_names)
