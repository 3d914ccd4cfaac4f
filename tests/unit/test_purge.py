"""Erasure: after ``purge`` no file of the store holds the purged words or embedding."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemory, NotFoundError, ScopeError, ValidationError
from dreammem.embed import HashingEmbedder
from tests.erasure import all_encodings, encodings, files_holding

SECRET = "Vexlumbra-99 shipped to Kraków from the Quorvane depot"
WORDS = ("Vexlumbra", "Kraków", "Quorvane")
KEPT = "Zylophant cheese is my favourite snack"


def word_bytes() -> list[bytes]:
    return all_encodings(WORDS)


def vector_bytes(text: str) -> bytes:
    """32 bytes of the stored float32 embedding of a text, from its first non-zero value."""
    vector = np.asarray(HashingEmbedder().embed_documents([text])[0], dtype=np.float32)
    start = int(np.flatnonzero(vector)[0])
    return vector[start : start + 8].tobytes()


def fill(memory: DreamMemory, user: str = "u1") -> str:
    memory.add("Hi, I'm planning a trip next month", user_id=user, session_id="s1")
    secret = memory.add(SECRET, user_id=user, session_id="s1").id
    memory.add("Can you remind me when it arrives?", user_id=user, session_id="s1")
    memory.add(KEPT, user_id=user, session_id="s2")
    return secret


def test_purge_one_memory_leaves_no_bytes_even_after_a_dream(tmp_path: Path) -> None:
    root = tmp_path / "store"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        report = memory.dream(user_id="u1")
        assert report.distilled, "the dream should have written a summary quoting the turns"
        assert files_holding(root, word_bytes()), "the words are on disk before the purge"
        assert files_holding(root, [vector_bytes(SECRET)]), "and so is the embedding"
        result = memory.purge(secret, user_id="u1")
        assert secret in result.purged
        assert result.dreams_scrubbed == 1 and result.compacted
        # derived summaries quoting the turn went too; the other memory stays
        assert files_holding(root, word_bytes()) == []  # store still open: WAL and -shm included
        assert files_holding(root, [vector_bytes(SECRET)]) == []
        assert files_holding(root, list(encodings("Zylophant")))  # the search does find what stays
        assert all(
            "Vexlumbra" not in h.record.content for h in memory.recall("Vexlumbra Kraków", user_id="u1")
        )
        with pytest.raises(NotFoundError):
            memory.get(secret, user_id="u1")
        assert all("Vexlumbra" not in str(r.to_dict()) for r in memory.get_all(user_id="u1", status=None))
    assert files_holding(root, word_bytes()) == []


def test_purge_reaches_the_next_turns_keyword_context(tmp_path: Path) -> None:
    """The turn after the purged one was indexed with its words as context."""
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        assert memory.recall("Quorvane", user_id="u1", paths=["keyword"]).hits
        memory.purge(secret, user_id="u1")
        assert memory.recall("Quorvane", user_id="u1", paths=["keyword"]).hits == ()
        assert memory.recall("remind arrives", user_id="u1", paths=["keyword"]).hits


def test_purge_history_and_twin(tmp_path: Path) -> None:
    """An edited memory's earlier text and a turn's semantic twin are erased with it."""
    root = tmp_path / "s"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        turn = memory.add("I prefer Vexlumbra reports", user_id="u1", session_id="s1")
        fact = next(r for r in memory.get_all(user_id="u1", layer="semantic"))
        memory.update(fact.id, "I prefer Quorvane reports", user_id="u1")
        assert len(memory.history(fact.id, user_id="u1")) == 2
        result = memory.purge(fact.id, user_id="u1")
        assert turn.id in result.purged and len(result.purged) == 4  # fact, turn, two old versions
        assert memory.get_all(user_id="u1", status=None) == []
        assert files_holding(root, word_bytes()) == []


def test_purge_whole_user_spares_other_users(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        fill(memory, "victim@example.org")
        memory.add(KEPT, user_id="other")
        memory.set_task_state(
            {"goal": "ship the Quorvane crate"}, user_id="victim@example.org", session_id="s1"
        )
        memory.dream(user_id="victim@example.org")
        result = memory.purge(user_id="victim@example.org")
        assert len(result.purged) >= 4 and result.dreams_scrubbed == 1
        assert memory.stats(user_id="victim@example.org")["records"]["active"] == 0
        assert memory.task_state(user_id="victim@example.org", session_id="s1") == {}
        assert memory.dreams(user_id="victim@example.org") == []
        assert {r.content for r in memory.get_all(user_id="other")} == {KEPT}
        assert memory.recall("Zylophant cheese", user_id="other").hits
        needles = [*word_bytes(), *encodings("victim@example.org")]
        assert files_holding(root, needles) == []


def test_purge_scope_and_bad_input(memory: DreamMemory) -> None:
    mine = memory.add("Vexlumbra is mine", user_id="u1")
    with pytest.raises(NotFoundError):
        memory.purge(mine.id, user_id="u2")  # another user's memory: not found, untouched
    assert memory.get(mine.id, user_id="u1").content == "Vexlumbra is mine"
    with pytest.raises(ScopeError):
        memory.purge(mine.id, user_id="")
    with pytest.raises(ValidationError):
        memory.purge(123, user_id="u1")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        memory.purge(mine.id, user_id="u1", dry_run="yes")  # type: ignore[arg-type]
    preview = memory.purge(mine.id, user_id="u1", dry_run=True)
    assert preview.dry_run and preview.purged == (mine.id,)
    assert memory.get(mine.id, user_id="u1").is_active
    assert memory.purge(user_id="nobody").purged == ()


def test_forget_stays_soft_and_purge_erases_a_forgotten_memory(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        memory.forget(secret, user_id="u1")
        assert memory.get(secret, user_id="u1").status.value == "deleted"
        assert files_holding(root, word_bytes())  # soft: still there for audit
        memory.purge(secret, user_id="u1")
        assert files_holding(root, word_bytes()) == []


def test_reopen_after_purge_rebuilds_nothing_stale(tmp_path: Path) -> None:
    root = tmp_path / "s"
    with DreamMemory(root, embedder=HashingEmbedder()) as memory:
        secret = fill(memory)
        memory.purge(secret, user_id="u1")
        count = memory.stats(user_id="u1")["vectors"]
        assert count == len(memory.get_all(user_id="u1")) == 4  # 2 turns of s1, the kept turn and its twin
    with DreamMemory(root, embedder=HashingEmbedder()) as again:
        assert again.stats(user_id="u1")["vectors"] == count
        assert all("Vexlumbra" not in h.record.content for h in again.recall("Vexlumbra", user_id="u1"))


def test_the_other_sources_of_a_purged_summary_come_back(memory: DreamMemory) -> None:
    secret = fill(memory)
    report = memory.dream(user_id="u1")
    summary = next(d for d in report.distilled if secret in d.sources)
    others = [s for s in summary.sources if s != secret]
    assert others and all(not memory.get(s, user_id="u1").is_active for s in others)
    result = memory.purge(secret, user_id="u1")
    assert summary.id in result.purged and set(result.restored) == set(others)
    for source in others:
        record = memory.get(source, user_id="u1")
        assert record.is_active and "archived" not in record.system
    hits = memory.recall("remind me when it arrives", user_id="u1", k=3)
    assert set(others) & {h.id for h in hits}


def test_a_slot_takes_its_versions_but_not_other_facts(memory: DreamMemory) -> None:
    memory.remember("Reports go out as Excel", user_id="u1", slot="user/report_format", pinned=False)
    current = memory.remember("Reports go out as Vexlumbra", user_id="u1", slot="user/report_format")
    other = memory.remember("Tea, never coffee", user_id="u1", slot="user/drink")
    history = memory.history(current.id, user_id="u1")
    assert len(history) >= 2
    result = memory.purge(current.id, user_id="u1")
    assert {r.id for r in history} <= set(result.purged)
    assert memory.get(other.id, user_id="u1").is_active
    assert [r.content for r in memory.get_all(user_id="u1", status=None)] == ["Tea, never coffee"]
