"""The dream's LLM adjudicates the write path's unsure pairs and vector-similar candidates."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from dreammem import DreamMemory
from dreammem.dream.llm_calls import read_prompt
from dreammem.embed import HashingEmbedder
from dreammem.types import Status
from dreammem.write.relations import DECISION_KEY, possibly_outdated_by
from tests.unit.dream.support import T0, seed

OLD = "I like answers in long detailed paragraphs."
NEW = "Keep answers short, bullet points."


class ConflictLLM:
    """A scripted LLM: scores 3, and confirms every conflict candidate (or none)."""

    def __init__(self, *, confirm: bool) -> None:
        self.confirm = confirm
        self.conflict_payloads: list[dict[str, object]] = []

    def __call__(self, prompt: str) -> str:
        task, payload = read_prompt(prompt)
        if task == "score":
            return json.dumps({"scores": [{"id": r["id"], "score": 3} for r in payload["records"]]})
        if task == "conflicts":
            self.conflict_payloads.append(payload)
            found = (
                [{"new": item["id"], "old": old["id"]} for item in payload["items"] for old in item["old"]]
                if self.confirm
                else []
            )
            return json.dumps({"conflicts": found})
        return "{}"


def _unsure_pair(memory: DreamMemory) -> tuple[str, str]:
    seed(memory, turns=[("s1", "user", OLD)])
    seed(memory, turns=[("s2", "user", NEW)], start=T0 + timedelta(days=2))
    records = memory.get_all(user_id="u1", limit=100)
    old = next(r for r in records if r.content == OLD)
    new = next(r for r in records if r.content == NEW)
    assert old.is_active and possibly_outdated_by(old) == (new.id,)
    return old.id, new.id


def test_a_confirmed_unsure_pair_is_superseded_with_the_llm_as_reason(tmp_path: Path) -> None:
    llm = ConflictLLM(confirm=True)
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder(), llm=llm) as memory:
        old_id, new_id = _unsure_pair(memory)
        report = memory.dream(user_id="u1", now=T0 + timedelta(days=3))
        old = memory.get(old_id, user_id="u1")
        assert old.status is Status.SUPERSEDED and old.superseded_by is not None
        assert old.system[DECISION_KEY]["rule"] == "llm"
        asked = [o["text"] for p in llm.conflict_payloads for i in p["items"] for o in i["old"]]  # type: ignore[attr-defined, index]
        assert OLD in asked
        memory.undo_dream(report.dream_id, user_id="u1")
        assert memory.get(old_id, user_id="u1").is_active
        assert possibly_outdated_by(memory.get(old_id, user_id="u1")) == (new_id,)


def test_an_unconfirmed_unsure_pair_loses_its_mark_and_both_stay(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder(), llm=ConflictLLM(confirm=False)) as memory:
        old_id, _ = _unsure_pair(memory)
        memory.dream(user_id="u1", now=T0 + timedelta(days=3))
        old = memory.get(old_id, user_id="u1")
        assert old.is_active and possibly_outdated_by(old) == ()


def test_without_an_llm_the_mark_stays_for_recall(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder()) as memory:
        old_id, new_id = _unsure_pair(memory)
        memory.dream(user_id="u1", now=T0 + timedelta(days=3))
        assert possibly_outdated_by(memory.get(old_id, user_id="u1")) == (new_id,)


def test_candidates_come_by_vector_not_shared_words(tmp_path: Path) -> None:
    llm = ConflictLLM(confirm=False)
    with DreamMemory(tmp_path / "s", embedder=HashingEmbedder(), llm=llm) as memory:
        seed(memory, turns=[("s0", "user", "Remember: reach me by e-mail for the quarterly numbers.")])
        memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
        seed(
            memory,
            turns=[("s1", "user", "Remember: ring me about the figures.")],
            start=T0 + timedelta(days=1),
        )
        memory.dream(user_id="u1", now=T0 + timedelta(days=2))
    asked = [o["text"] for p in llm.conflict_payloads for i in p["items"] for o in i["old"]]  # type: ignore[attr-defined, index]
    assert "Remember: reach me by e-mail for the quarterly numbers." in asked
