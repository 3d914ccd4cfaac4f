"""The Neo4j backend's grounded windows follow an edit (its per-process cache is keyed by text and time)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from dreammem import DreamMemory
from dreammem.embed import HashingEmbedder
from dreammem.recall.base import RecallQuery
from dreammem.recall.temporal import TemporalPath
from dreammem.stores.base import RecordCapability
from tests.neo4j_server import Neo4jServer

pytestmark = [pytest.mark.integration, pytest.mark.neo4j]

SAID = datetime(2022, 9, 2, 9, tzinfo=UTC)
NOW = SAID + timedelta(days=600)


def test_an_edited_text_is_grounded_again_in_the_same_process(neo4j_server: Neo4jServer) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    with DreamMemory(neo4j_server.uri, embedder=HashingEmbedder()) as memory:
        assert RecordCapability.GROUNDED_TIMES not in memory.store.capabilities  # the path keeps them itself
        kayak = memory.add("Bought a kayak yesterday", user_id=user, event_time=SAID)
        rowid = memory.store.rowids(user, [kayak.id])[kayak.id]
        path = TemporalPath(memory.store, memory.vector_index, memory.embedder)

        def found(question: str) -> list[int]:
            query = RecallQuery(text=question, user_id=user, limit=5, now=NOW)
            return [c.rowid for c in path.search(query)]

        assert rowid in found("kayak on 1 September 2022")  # "yesterday": 1 September, now cached
        assert rowid not in found("kayak in July 2022")
        memory.update(kayak.id, "Bought a kayak last summer", user_id=user)
        assert rowid in found("kayak in July 2022")  # the new text's window, not the cached one
        assert rowid not in found("kayak on 1 September 2022")
        recalled = memory.recall("what did I buy in July 2022?", user_id=user, now=NOW)
        assert kayak.id in [h.record.id for h in recalled]
