"""What anchors the LLM's judgement during a dream: task goal, user profile, project stage."""

from __future__ import annotations

from dataclasses import dataclass

from dreammem.config import DreamConfig
from dreammem.stores.base import RecordStore
from dreammem.types import Kind, Layer

__all__ = ["DreamContext", "default_context"]

_PROFILE_ITEMS = 8


@dataclass(frozen=True, slots=True)
class DreamContext:
    """Anchors for LLM scoring and distillation (each optional).

    Attributes:
        task_goal: The task the agent is working on.
        user_profile: Who the user is, in a few lines.
        project_stage: Where the project stands.
    """

    task_goal: str | None = None
    user_profile: str | None = None
    project_stage: str | None = None

    def render(self) -> str:
        """The context as prompt lines ("unknown" for what is not set)."""
        return (
            f"Task goal: {self.task_goal or 'unknown'}\n"
            f"User profile: {self.user_profile or 'unknown'}\n"
            f"Project stage: {self.project_stage or 'unknown'}"
        )


def default_context(store: RecordStore, user_id: str, config: DreamConfig) -> DreamContext:
    """The configured context, filled in from the store where the config is silent.

    The task goal falls back to the goal of the user's most recent task state; the
    profile to the user's pinned memories and active constraints and preferences.
    """
    goal = config.task_goal
    if goal is None:
        latest = store.latest_task_state(user_id).get("goal")
        goal = str(latest) if latest else None
    profile = config.user_profile
    if profile is None:
        facts = store.find(user_id, pinned=True, limit=_PROFILE_ITEMS)
        if len(facts) < _PROFILE_ITEMS:
            facts += store.find(
                user_id,
                layers=[Layer.SEMANTIC],
                kinds=[Kind.CONSTRAINT, Kind.PREFERENCE, Kind.PATTERN],
                limit=_PROFILE_ITEMS - len(facts),
            )
        profile = "; ".join(dict.fromkeys(f.content for f in facts)) or None
    return DreamContext(task_goal=goal, user_profile=profile, project_stage=config.project_stage)
