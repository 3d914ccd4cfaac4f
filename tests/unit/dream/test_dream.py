from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from dreammem import DreamMemConfig, DreamMemory, Kind, Layer, ScopeError, Status, ValidationError
from dreammem.config import DreamConfig
from dreammem.embed import HashingEmbedder
from dreammem_bench.scripted_llm import ScriptedDreamLLM
from tests.unit.dream.support import (
    T0,
    CallbackLLM,
    MalformedLLM,
    SlowLLM,
    WrongIdsLLM,
    active_contents,
    seed,
    snapshot,
)

CONSTRAINT_EN = "Our budget must not exceed 50,000 RMB; open-source stack only."
CONSTRAINT_ZH = "只能使用开源技术栈，绝不能用付费软件"
BUDGET_ZH = "预算不超过人民币五万元，只能使用开源技术栈"


def open_memory(path: Path, llm: object | None = None, **dream: object) -> DreamMemory:
    config = DreamMemConfig(dream=DreamConfig(**dream))  # type: ignore[arg-type]
    return DreamMemory(path, embedder=HashingEmbedder(), llm=llm, config=config)


def test_dream_consumes_the_queue_and_logs_a_report(memory: DreamMemory) -> None:
    seed(memory)
    report = memory.dream(user_id="u1")
    assert memory.stats(user_id="u1")["queue"] == 0
    assert report.queued == 19 and report.mode == "rules" and not report.dry_run
    counts = report.counts
    assert counts["patterns"] == 1 and counts["merged"] == 3
    assert counts["archived"] >= 6  # small talk in both languages
    assert counts["summaries"] >= 2  # one per session
    assert counts["migrated"] == 1  # the constraint is held by its semantic record
    assert counts["kept"] >= 2  # the order and the Chinese hard limit
    assert memory.dreams(user_id="u1")[0] == report
    # every queued record is accounted for exactly once
    ids = (
        set(report.kept)
        | {s for d in report.distilled for s in d.sources}
        | {c.id for c in report.archived}
        | {c.id for c in report.migrated}
        | set(report.skipped)
    )
    assert len(ids) == report.queued


def test_outcomes_in_the_store(memory: DreamMemory) -> None:
    seed(memory)
    report = memory.dream(user_id="u1")
    for change in report.archived:
        record = memory.get(change.id, user_id="u1")
        assert record.status is Status.ARCHIVED
        assert record.system["archived"]["dream_id"] == report.dream_id
    for made in report.distilled:
        record = memory.get(made.id, user_id="u1")
        assert record.provenance == made.sources
        assert record.system["dream_id"] == report.dream_id
        for source in made.sources:
            assert memory.get(source, user_id="u1").status is not Status.ACTIVE
    for kept in report.kept:
        assert memory.get(kept, user_id="u1").is_active
    contents = active_contents(memory)
    assert CONSTRAINT_EN in contents and CONSTRAINT_ZH in contents
    assert "Order #48213 ships on 2026-02-10" in contents
    assert not any(c in contents for c in ("lol", "ok thanks", "哈哈", "好的"))
    assert memory.stats(user_id="u1")["vectors"] == len(memory.get_all(user_id="u1", limit=1000))


def test_archived_records_leave_recall_but_are_kept(memory: DreamMemory) -> None:
    seed(memory)
    memory.dream(user_id="u1")
    hits = memory.recall("lol", user_id="u1", k=10)
    assert all(h.record.content != "lol" for h in hits)
    archived = memory.get_all(user_id="u1", status="archived", limit=1000)
    assert "lol" in {r.content for r in archived}


def test_dry_run_writes_nothing_and_predicts_the_real_run(memory: DreamMemory) -> None:
    seed(memory)
    before = snapshot(memory)
    dry = memory.dream(user_id="u1", dry_run=True)
    assert snapshot(memory) == before
    assert dry.dry_run and memory.dreams(user_id="u1") == []
    real = memory.dream(user_id="u1")
    for key in ("kept", "summaries", "patterns", "archived", "migrated", "merged", "compressed"):
        assert dry.counts[key] == real.counts[key], key
    assert set(dry.kept) == set(real.kept)


def test_rerun_does_not_duplicate(memory: DreamMemory) -> None:
    seed(memory)
    memory.dream(user_id="u1")
    after_first = snapshot(memory)
    again = memory.dream(user_id="u1")
    assert again.queued == 0 and again.distilled == ()
    assert snapshot(memory) == after_first


def test_constraints_survive_many_dreams_verbatim(memory: DreamMemory) -> None:
    for day in range(10):
        turns = [
            ("s", "user", "ok"),
            ("s", "user", "we chatted about the garden again"),
            ("s", "assistant", "Sure, happy to help!"),
        ]
        if day == 0:
            turns.append(("s", "user", CONSTRAINT_EN))
        if day == 3:
            turns.append(("s", "user", CONSTRAINT_ZH))
        seed(memory, turns=turns, start=T0 + timedelta(days=day))
        memory.dream(user_id="u1", now=T0 + timedelta(days=day, hours=23))
    contents = active_contents(memory)
    assert CONSTRAINT_EN in contents and CONSTRAINT_ZH in contents
    assert CONSTRAINT_EN in [h.record.content for h in memory.recall("budget limit", user_id="u1", k=3)]
    assert CONSTRAINT_ZH in [h.record.content for h in memory.recall("开源技术栈", user_id="u1", k=3)]


def test_chinese_budget_constraint_survives(memory: DreamMemory) -> None:
    for day in range(3):
        turns = [("s", "user", "好的"), ("s", "user", "我们聊了聊周末的安排")]
        if day == 1:
            turns.append(("s", "user", BUDGET_ZH))
        seed(memory, turns=turns, start=T0 + timedelta(days=day))
        memory.dream(user_id="u1", now=T0 + timedelta(days=day, hours=23))
    assert BUDGET_ZH in active_contents(memory)
    assert BUDGET_ZH in [h.record.content for h in memory.recall("预算是多少", user_id="u1", k=3)]


def test_newest_preference_wins_and_history_keeps_the_chain(memory: DreamMemory) -> None:
    excel = [("s1", "user", "I prefer Excel reports over PDF")] * 3
    seed(memory, turns=excel)
    first = memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
    (pattern,) = [d for d in first.distilled if d.kind == "pattern"]
    seed(memory, turns=[("s2", "user", "Actually, I now prefer CSV reports")], start=T0 + timedelta(days=1))
    memory.dream(user_id="u1", now=T0 + timedelta(days=1, hours=1))
    active = [r for r in memory.get_all(user_id="u1", layer="semantic") if r.slot == "user/report format"]
    assert [r.content for r in active] == ["Actually, I now prefer CSV reports"]
    old = memory.get(pattern.id, user_id="u1")
    assert old.status is Status.SUPERSEDED and old.valid_to is not None
    chain = [r.content for r in memory.history(old.id, user_id="u1")]
    assert chain[-1] == "Actually, I now prefer CSV reports"
    assert "I prefer Excel reports over PDF" in chain


def test_a_pattern_older_than_the_current_value_is_written_superseded(memory: DreamMemory) -> None:
    turns = [("s1", "user", "I prefer Excel reports over PDF")] * 2 + [
        ("s1", "user", "Actually, I now prefer CSV reports")
    ]
    seed(memory, turns=turns)
    # Excel is already superseded by CSV at write time: repeated but outdated, no active pattern.
    report = memory.dream(user_id="u1")
    active = [r for r in memory.get_all(user_id="u1", layer="semantic") if r.slot == "user/report format"]
    assert [r.content for r in active] == ["Actually, I now prefer CSV reports"]
    assert all(d.status == "superseded" for d in report.distilled if d.kind == "pattern")


def test_conflicting_new_pattern_supersedes_older_slot_value(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        seed(memory, turns=[("s1", "user", "My favorite editor is Vim")])
        memory.dream(user_id="u1")
        later = [("s2", "user", "My favorite editor is Emacs")] * 2
        seed(memory, turns=later, start=T0 + timedelta(days=2))
        report = memory.dream(user_id="u1")
        active = [r.content for r in memory.get_all(user_id="u1", layer="semantic")]
        assert active == ["My favorite editor is Emacs"]
        (pattern,) = [d for d in report.distilled if d.kind == "pattern"]
        assert memory.get(pattern.id, user_id="u1").kind is Kind.PATTERN
        assert memory.get(pattern.id, user_id="u1").layer is Layer.SEMANTIC


def test_dreams_are_scoped_to_one_user(memory: DreamMemory) -> None:
    seed(memory, user="u1")
    seed(memory, user="u2")
    before_u2 = [r for r in memory.get_all(user_id="u2", status=None, limit=1000)]
    memory.dream(user_id="u1")
    assert memory.stats(user_id="u2")["queue"] == 19
    assert memory.get_all(user_id="u2", status=None, limit=1000) == before_u2


def test_bad_arguments(memory: DreamMemory) -> None:
    with pytest.raises(ScopeError):
        memory.dream(user_id="")
    with pytest.raises(ValidationError):
        memory.dream(user_id="u1", level=3)


def test_scripted_llm_improves_and_is_accounted(tmp_path: Path) -> None:
    llm = ScriptedDreamLLM()
    with open_memory(tmp_path, llm=llm) as memory:
        seed(memory)
        report = memory.dream(user_id="u1")
    assert report.mode == "llm"
    assert report.llm["calls"] == len(llm.tasks) >= 2
    assert report.llm["tokens"] > 0
    (pattern,) = [d for d in report.distilled if d.kind == "pattern"]
    assert pattern.content == "Repeatedly said: I prefer Excel reports over PDF"


@pytest.mark.parametrize(
    "llm_factory",
    [MalformedLLM, WrongIdsLLM, lambda: SlowLLM(1.0)],
    ids=["malformed", "wrong-ids", "timeout"],
)
def test_a_failing_llm_degrades_to_rules_and_says_so(tmp_path: Path, llm_factory: object) -> None:
    with open_memory(tmp_path / "rules") as plain:
        seed(plain)
        rules = plain.dream(user_id="u1")
    llm = llm_factory()  # type: ignore[operator]
    with open_memory(tmp_path / "llm", llm=llm, llm_timeout_seconds=0.2, llm_retries=1) as memory:
        seed(memory)
        report = memory.dream(user_id="u1")
        contents = active_contents(memory)
    assert report.mode == "llm-degraded"
    assert report.degraded
    assert CONSTRAINT_EN in contents and CONSTRAINT_ZH in contents
    if not isinstance(llm, WrongIdsLLM):
        # nothing usable came back: the decisions are the rules' decisions
        assert report.counts["kept"] == rules.counts["kept"]
        assert report.counts["archived"] == rules.counts["archived"]


def test_llm_budget_caps_the_calls(tmp_path: Path) -> None:
    llm = ScriptedDreamLLM()
    turns = [
        ("s", "assistant", f"I reviewed the layout draft number {n} with the team today") for n in range(60)
    ]
    with open_memory(tmp_path, llm=llm, max_llm_calls=2, llm_batch_size=20) as memory:
        seed(memory, turns=turns)
        report = memory.dream(user_id="u1")
    assert report.llm["calls"] == 2 == len(llm.tasks)
    assert any("budget" in note for note in report.degraded)


def test_a_concurrent_dream_on_the_same_file_never_duplicates(tmp_path: Path) -> None:
    def other_process_dreams() -> None:
        with open_memory(tmp_path) as other:
            other.dream(user_id="u1")

    llm = CallbackLLM(other_process_dreams, ScriptedDreamLLM())
    with open_memory(tmp_path, llm=llm) as memory:
        seed(memory)
        report = memory.dream(user_id="u1")
        assert llm.fired
        assert report.queued == 0  # the retry found the queue already consumed
        logs = memory.store.fetchall("SELECT COUNT(*) FROM dreams")[0][0]
        patterns = memory.get_all(user_id="u1", layer="semantic", limit=1000)
    assert logs == 1
    assert sum(1 for r in patterns if r.kind is Kind.PATTERN) == 1


def test_reopen_after_a_dream_keeps_recall_consistent(tmp_path: Path) -> None:
    with open_memory(tmp_path) as memory:
        seed(memory)
        memory.dream(user_id="u1")
        expected = memory.recall("Excel reports", user_id="u1", k=3).ids
    with open_memory(tmp_path) as memory:
        assert memory.recall("Excel reports", user_id="u1", k=3).ids == expected
        assert memory.stats(user_id="u1")["vectors"] == len(memory.get_all(user_id="u1", limit=1000))


def test_patterns_carry_support_across_dreams(memory: DreamMemory) -> None:
    rule = "Never share the customer list with Acme"
    seed(memory, turns=[("s1", "user", rule)] * 2)
    first = memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
    (p1,) = [d for d in first.distilled if d.kind == "pattern"]
    seed(memory, turns=[("s2", "user", rule)] * 3, start=T0 + timedelta(days=1))
    second = memory.dream(user_id="u1", now=T0 + timedelta(days=1, hours=1))
    (p2,) = [d for d in second.distilled if d.kind == "pattern"]
    patterns = [r for r in memory.get_all(user_id="u1", layer="semantic") if r.kind is Kind.PATTERN]
    assert [r.id for r in patterns] == [p2.id]
    assert patterns[0].system["support"] == 5 and patterns[0].content == rule
    assert p1.id in patterns[0].provenance
    old = memory.get(p1.id, user_id="u1")
    assert old.status is Status.SUPERSEDED and old.superseded_by == p2.id


def test_an_invoice_due_date_does_not_supersede_a_deadline(memory: DreamMemory) -> None:
    deadline = "The launch deadline is 2026-03-15 and it cannot move."
    seed(
        memory,
        turns=[
            ("s1", "user", deadline),
            ("s1", "user", "Invoice INV-7565 of 4,100 USD is due on 2026-02-12"),
        ],
    )
    memory.dream(user_id="u1")
    assert deadline in active_contents(memory)


def test_a_summary_is_indexed_at_the_centroid_of_what_it_replaces(memory: DreamMemory) -> None:
    seed(memory)
    report = memory.dream(user_id="u1")
    summary = next(d for d in report.distilled if d.kind == "summary")

    def vector(record_id: str) -> np.ndarray:
        row = memory.store.fetchone(
            "SELECT v.vec FROM vectors v JOIN records r ON r.rowid = v.rowid WHERE r.id = ?", (record_id,)
        )
        return np.frombuffer(row[0], dtype=np.float32)

    centroid = np.mean([vector(s) for s in summary.sources], axis=0)
    assert np.allclose(vector(summary.id), centroid / np.linalg.norm(centroid), atol=1e-6)
    assert summary.id in memory.recall(summary.content, user_id="u1", k=5).ids


def test_the_llm_resolves_conflicts_that_have_no_slot(tmp_path: Path) -> None:
    old_fact = "Remember: the team standup is at 9:30 in room Nile"
    new_fact = "Remember: the team standup is now at 10:15 in room Nile"
    for mode, llm in (("rules", None), ("llm", ScriptedDreamLLM())):
        with open_memory(tmp_path / mode, llm=llm) as memory:
            seed(memory, turns=[("s1", "user", old_fact)])
            memory.dream(user_id="u1", now=T0 + timedelta(hours=1))
            seed(memory, turns=[("s2", "user", new_fact)], start=T0 + timedelta(days=1))
            report = memory.dream(user_id="u1", now=T0 + timedelta(days=1, hours=1))
            active = active_contents(memory)
        # The write path's rules see the change (the same standup at another time) before any dream.
        assert old_fact not in active and new_fact in active
        assert all(c.reason for c in report.superseded)
