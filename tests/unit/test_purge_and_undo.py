"""Purge and undo in either order: a purged memory never comes back, the rest does."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreammem import DreamMemory, NotFoundError
from dreammem.embed import HashingEmbedder
from tests.erasure import files_holding
from tests.unit.test_purge import fill, word_bytes


def _statuses(memory: DreamMemory) -> dict[str, str]:
    return {r.id: r.status.value for r in memory.get_all(user_id="u1", status=None, limit=1000)}


def test_undoing_a_dream_after_a_purge_does_not_bring_the_purged_memory_back(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        before = _statuses(memory)
        queued_before = {r.id for r in memory.store.queued("u1")}
        report = memory.dream(user_id="u1")
        purged = memory.purge(secret, user_id="u1")
        result = memory.undo_dream(report.dream_id, user_id="u1")
        assert secret not in result.restored and secret not in result.deleted
        assert set(result.skipped) <= set(purged.restored)  # the purge put them back already
        expected = {i: s for i, s in before.items() if i not in purged.purged}
        assert _statuses(memory) == expected
        assert {r.id for r in memory.store.queued("u1")} == queued_before - set(purged.purged)
        with pytest.raises(NotFoundError):
            memory.get(secret, user_id="u1")
        hits = memory.recall("Vexlumbra Kraków", user_id="u1")
        assert all("Vexlumbra" not in h.record.content for h in hits)
    assert files_holding(root, word_bytes()) == []


def test_purging_after_an_undo_erases_as_if_no_dream_had_run(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        report = memory.dream(user_id="u1")
        memory.undo_dream(report.dream_id, user_id="u1")
        result = memory.purge(secret, user_id="u1")
        assert secret in result.purged and result.dreams_scrubbed == 1
        assert memory.dreams(user_id="u1")[0].dream_id == report.dream_id  # the log entry stays, scrubbed
        assert "Vexlumbra" not in repr(memory.dreams(user_id="u1"))
    assert files_holding(root, word_bytes()) == []
