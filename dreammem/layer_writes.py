"""Writes for the layers built on the facade: adapter messages and keyed entries.

:class:`LayerWriteMixin` gives :class:`~dreammem.memory.DreamMemory` the two writes whose
records carry a note the library reads back (issue 35, item 3): an adapter message's
de-duplication key (:func:`dreammem.agent_api.ingest_turns`) and a keyed entry's path,
key and value (:mod:`dreammem.keyed`). Both notes go into the record's ``system``
(:data:`~dreammem.system_meta.MESSAGE_KEY`, :data:`~dreammem.system_meta.KEYED_KEY`),
never into the caller's ``metadata``, so a caller's ``metadata={"message_key": ...}``
or ``{"keyed": ...}`` is the caller's data and changes nothing. Each takes only its
own typed value: neither accepts other system notes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from dreammem.config import DreamMemConfig
from dreammem.engine import Engine
from dreammem.errors import ValidationError
from dreammem.system_meta import KEYED_KEY, MESSAGE_KEY
from dreammem.text.tokenize import tokenize
from dreammem.types import Kind, MemoryRecord, utcnow
from dreammem.validation import check_metadata, check_slot
from dreammem.write.inputs import turn_input, turn_inputs
from dreammem.write.records import build_core_memory

__all__ = ["LayerWriteMixin"]


class LayerWriteMixin:
    """Adapter-message and keyed-entry writes of the facade (see the module docstring)."""

    config: DreamMemConfig
    """The settings (provided by the facade)."""
    engine: Engine
    """The engine beneath (provided by the facade)."""

    def add_messages(self, turns: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> list[MemoryRecord]:
        """Store turns as :meth:`~dreammem.memory.DreamMemory.add_many` does, each noted with its message key.

        ``keys[i]`` is what :meth:`~dreammem.lookups.LookupMixin.stored_message_keys` finds
        turn ``i`` by afterwards (``system["message_key"]``).

        Raises:
            ValidationError: a bad turn, a key that is not a non-empty str, or not one key a turn.
        """
        if len(turns) != len(keys) or not all(isinstance(k, str) and k for k in keys):
            raise ValidationError("add_messages takes one non-empty str key for each turn")
        now = utcnow()
        inputs = turn_inputs(turns, now, self.config.write)
        noted = [replace(t, system={MESSAGE_KEY: k}) for t, k in zip(inputs, keys, strict=True)]
        return self.engine.add_turns(noted, now) if noted else []

    def remember_keyed(
        self, content: str, *, user_id: str, slot: str, entry: Mapping[str, Any]
    ) -> MemoryRecord:
        """Store a keyed entry: an unpinned user fact in ``slot``, noted with ``entry`` (``system["keyed"]``).

        An active record of the same slot is superseded by it (the slot rule); it never
        updates another statement (write-time update resolution skips keyed records).

        Raises:
            ValidationError: bad content or slot, or an entry that is not JSON or over
                the content limit (``write.max_content_chars``).
        """
        now, limit = utcnow(), self.config.write.max_content_chars
        turn = turn_input({"content": content, "user_id": user_id}, now, max_chars=limit)
        note = check_metadata(entry, max_chars=limit, what="keyed entry")
        noted = replace(turn, system={KEYED_KEY: note})
        record = build_core_memory(noted, kind=Kind.FACT, now=now, pinned=False, slot=check_slot(slot))
        self.engine.persist([record], [" ".join(tokenize(record.content))], enqueue=[])
        return record
