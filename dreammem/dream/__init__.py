"""Dreaming: consolidate short-term memory into durable long-term memory while idle.

One module per stage (docs/concepts.md, "Dreaming"): :mod:`~dreammem.dream.triggers` (when),
:mod:`~dreammem.dream.score` (1-5), :mod:`~dreammem.dream.distill` (keep, summarise,
pattern, drop) with :mod:`~dreammem.dream.guard` (the verbatim guard),
:mod:`~dreammem.dream.migrate` (the atomic commit), :mod:`~dreammem.dream.forget`
(archive), :mod:`~dreammem.dream.conflicts` (newest wins),
:mod:`~dreammem.dream.report`, :mod:`~dreammem.dream.undo`,
:mod:`~dreammem.dream.second_level`;
:mod:`~dreammem.dream.llm_calls` wraps the optional LLM (structured output, budget,
accounting). Use it through :meth:`dreammem.DreamMemory.dream`.
"""

from dreammem.dream.context import DreamContext
from dreammem.dream.llm_calls import LLMBudget, LLMUsage, StructuredLLM
from dreammem.dream.report import Change, Distilled, DreamReport
from dreammem.dream.scheduler import DreamScheduler
from dreammem.dream.triggers import TriggerDecision, TriggerState, check_triggers
from dreammem.dream.undo import UndoResult

__all__ = [
    "Change",
    "Distilled",
    "DreamContext",
    "DreamReport",
    "DreamScheduler",
    "LLMBudget",
    "LLMUsage",
    "StructuredLLM",
    "TriggerDecision",
    "TriggerState",
    "UndoResult",
    "check_triggers",
]
