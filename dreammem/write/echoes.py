"""The assistant's echo of a value the user later replaced ("Got it, email it is.", "好的，周四发。").

An assistant reply that restates the user's statement carries its value too: once a newer
statement replaces (or may replace) that statement, the echo is as outdated as it is. It is
never superseded (the assistant did say it), but marked possibly outdated by the newer
statement, so recall shows the current value first and labels the echo as earlier.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.types import MemoryRecord, Role
from dreammem.write.resolve import Outcome, analyse_record
from dreammem.write.updates import Action, Decision

__all__ = ["ECHO", "echo_outcomes", "restates"]

ECHO = "echo"
"""The rule name of a decision on an assistant's echo of a replaced statement."""


def restates(reply: MemoryRecord, statement: MemoryRecord) -> bool:
    """True when the reply shares a topic word or a value with the statement it answers."""
    said, echoed = analyse_record(statement), analyse_record(reply)
    return bool((said.topics | said.values) & (echoed.topics | echoed.values))


def echo_outcomes(outcome: Outcome, after: Sequence[MemoryRecord]) -> list[Outcome]:
    """The echoes of ``outcome.old`` among the turns said right after it (oldest first).

    Only the assistant's replies before the user's next turn count, and only those that
    restate the older statement.
    """
    if outcome.decision.action is Action.COEXIST:
        return []
    out: list[Outcome] = []
    for turn in after:
        if turn.id == outcome.old.id or turn.id in outcome.old.provenance:
            continue
        if turn.role is not Role.ASSISTANT:
            break
        if turn.is_active and restates(turn, outcome.old):
            why = f"the assistant restated {outcome.old.content!r}; {outcome.decision.reason}"
            out.append(
                Outcome(turn, outcome.new, Decision(Action.UNSURE, ECHO, why, outcome.decision.overlap))
            )
    return out
