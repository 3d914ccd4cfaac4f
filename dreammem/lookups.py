"""Read-only look-ups for the layers built on the facade: keyed entries and agent message sync.

:class:`LookupMixin` gives :class:`~dreammem.memory.DreamMemory` the reads that
:mod:`dreammem.keyed` (a key-value view over slots) and :mod:`dreammem.agent_api`
(idempotent message ingestion, session transcripts) need, so neither reaches into
the record store. Every look-up is scoped to one user except :meth:`slot_names`,
which lists slot names (never content) across users for namespace listings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dreammem.errors import ValidationError
from dreammem.types import Kind, MemoryRecord, Status
from dreammem.validation import check_id, check_k, check_user_id, require_id

if TYPE_CHECKING:
    from dreammem.stores.base import RecordStore

__all__ = ["LookupMixin"]

_TRANSCRIPT = (Status.ACTIVE, Status.SUPERSEDED, Status.ARCHIVED)
"""Statuses of a turn that still belongs to a session's transcript (all but deleted)."""


class LookupMixin:
    """Slot, session and message-key look-ups of the facade (see the module docstring)."""

    store: RecordStore
    """The record store (provided by the facade)."""

    def slot_records(
        self,
        *,
        user_id: str,
        slot: str | None = None,
        slot_prefix: str | None = None,
        oldest_first: bool = False,
        limit: int | None = None,
    ) -> list[MemoryRecord]:
        """The user's active records holding ``slot``, or any slot that starts with ``slot_prefix``.

        Raises:
            ValidationError: neither or both of ``slot`` and ``slot_prefix``, or a bad limit.
        """
        if (slot is None) == (slot_prefix is None):
            raise ValidationError("give exactly one of slot and slot_prefix")
        return self.store.find(
            check_user_id(user_id),
            slot=None if slot is None else _text(slot, "slot"),
            slot_prefix=None if slot_prefix is None else _text(slot_prefix, "slot_prefix"),
            newest_first=not oldest_first,
            limit=None if limit is None else check_k(limit),
        )

    def slot_names(self, prefix: str) -> list[str]:
        """Distinct slots of active records, across users, that start with ``prefix``, sorted."""
        return self.store.slots(_text(prefix, "prefix"))

    def session_records(self, *, user_id: str, session_id: str) -> list[MemoryRecord]:
        """Every turn of a session that was not forgotten, oldest first.

        A turn whose fact was superseded or archived later still happened, so it stays;
        only forgotten (deleted) turns leave the transcript.
        """
        return self.store.find(
            check_user_id(user_id),
            statuses=_TRANSCRIPT,
            kinds=[Kind.TURN],
            session_id=require_id(session_id, "session_id"),
            newest_first=False,
        )

    def stored_message_keys(self, keys: Sequence[str], *, user_id: str, session_id: str | None) -> set[str]:
        """Which of these message keys (``system["message_key"]``) the user's session already holds."""
        return self.store.existing_message_keys(
            check_user_id(user_id), check_id(session_id, "session_id"), [str(k) for k in keys]
        )


def _text(value: object, what: str) -> str:
    # Slots may be longer than ids (a keyed path is JSON), so only the type is checked.
    if not isinstance(value, str) or not value:
        raise ValidationError(f"{what} must be a non-empty str")
    return value
