from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from dreammem import DreamMemory
from dreammem.dream.context import DreamContext
from dreammem.dream.llm_calls import LLMBudget, StructuredLLM, read_prompt
from dreammem.dream.score import is_noise, rule_score, score
from dreammem.embed import HashingEmbedder
from dreammem.types import MemoryRecord, Priority, Role, Source
from tests.unit.dream.support import seed


def rec(text: str, role: Role = Role.USER, priority: Priority | None = None, **kw: object) -> MemoryRecord:
    default = Priority.HIGH if role is Role.USER else Priority.NORMAL
    return MemoryRecord(user_id="u", content=text, role=role, priority=priority or default, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["ok thanks", "lol", "Sounds good!", "👍", "好的谢谢", "哈哈", "嗯嗯"])
def test_small_talk_is_noise_in_both_languages(text: str) -> None:
    assert is_noise(text)
    assert rule_score(rec(text)) == (1, "small talk", True)


@pytest.mark.parametrize("text", ["ok, order #48213 ships Monday", "thanks Tom Becker", "好的，预算五万元"])
def test_small_talk_with_facts_is_not_noise(text: str) -> None:
    assert not is_noise(text)


def test_metadata_first_explicit_and_pinned_are_five() -> None:
    assert rule_score(rec("anything at all", pinned=True))[0] == 5
    assert rule_score(rec("anything at all", source=Source.USER_EXPLICIT))[0] == 5


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Our budget must not exceed 50,000 RMB; open-source stack only.", 5),
        ("预算不超过人民币五万元，只能使用开源技术栈", 5),
        ("Actually, my manager is Sarah Lee now", 5),
        ("I prefer Excel reports over PDF", 4),
        ("我喜欢用Excel做报告", 4),
        ("Order #48213 ships on 2026-02-10", 4),
    ],
)
def test_rules_for_user_statements(text: str, expected: int) -> None:
    value, _, certain = rule_score(rec(text))
    assert value == expected
    assert certain


def test_tool_output_is_capped_and_errors_are_low() -> None:
    assert rule_score(rec("fetched 3 rows from sales", role=Role.TOOL))[0] <= 3
    assert rule_score(rec("ERROR: export timed out", role=Role.TOOL, priority=Priority.LOW))[0] <= 2
    assert rule_score(rec("Sure, happy to help!", role=Role.ASSISTANT)) == (1, "small talk", True)
    assert rule_score(rec("Let me check the logs for you", role=Role.ASSISTANT)) == (1, "filler", True)


def test_names_raise_undecided_user_turns() -> None:
    value, reason, certain = rule_score(rec("We talked about the Berlin trip with Anna"))
    assert (value, reason, certain) == (3, "names", False)


class RecordingScorer:
    """Scores every asked record with a fixed value and remembers each batch."""

    def __init__(self, value: int) -> None:
        self.value = value
        self.batches: list[list[str]] = []
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        _, payload = read_prompt(prompt)
        self.batches.append([r["text"] for r in payload["records"]])
        return json.dumps({"scores": [{"id": r["id"], "score": self.value} for r in payload["records"]]})


def _llm(fn: object, calls: int = 12) -> StructuredLLM:
    return StructuredLLM(fn, LLMBudget(calls, 100_000))  # type: ignore[arg-type]


def test_llm_scores_only_undecided_records_in_batches() -> None:
    decided = [rec("ok thanks"), rec("Budget must not exceed 5,000 USD")]
    undecided = [rec(f"assistant note number {n} about layouts", role=Role.ASSISTANT) for n in range(45)]
    fake = RecordingScorer(5)
    scored, notes = score(decided + undecided, llm=_llm(fake), context=DreamContext(), batch_size=20)
    assert len(fake.batches) == math.ceil(45 / 20)
    assert all(len(b) <= 20 for b in fake.batches)
    assert not any("ok thanks" in t for b in fake.batches for t in b)
    assert [s.score for s in scored[:2]] == [1, 5]
    assert all(s.score == 5 and s.basis == "llm" for s in scored[2:])
    assert notes == []


def test_llm_never_lowers_high_priority_below_four_and_tool_stays_capped() -> None:
    user = rec("We talked about the Berlin trip with Anna")  # rules: 3, high priority
    user_with_name = rec("Anna and Tom Becker planned the Lisbon offsite")
    assistant = rec("I looked into the new dashboard layout", role=Role.ASSISTANT)
    tool = rec("fetched rows from the sales table", role=Role.TOOL)
    low = RecordingScorer(1)
    scored, _ = score([user, user_with_name, assistant], llm=_llm(low), context=DreamContext(), batch_size=25)
    assert [s.score for s in scored] == [3, 3, 1]
    high = RecordingScorer(5)
    scored, _ = score([tool], llm=_llm(high), context=DreamContext(), batch_size=25)
    assert scored[0].score == 3


def test_prompt_is_anchored_with_context() -> None:
    fake = RecordingScorer(3)
    context = DreamContext(
        task_goal="migrate the ETL pipeline", user_profile="data lead", project_stage="pilot"
    )
    score([rec("notes on the layout", role=Role.ASSISTANT)], llm=_llm(fake), context=context, batch_size=25)
    assert "migrate the ETL pipeline" in fake.prompts[0]
    assert "data lead" in fake.prompts[0] and "pilot" in fake.prompts[0]


def test_malformed_answers_fall_back_to_rules_and_say_so() -> None:
    records = [rec("notes on the layout", role=Role.ASSISTANT)]
    scored, notes = score(records, llm=_llm(lambda p: "no json here"), context=DreamContext(), batch_size=25)
    assert scored[0].score == 2 and scored[0].basis != "llm"
    assert notes and "rule scores used" in notes[0]


def test_wrong_ids_are_ignored_and_reported() -> None:
    records = [rec("notes on the layout", role=Role.ASSISTANT)]

    def wrong(prompt: str) -> str:
        return json.dumps({"scores": [{"id": "r7", "score": 5}]})

    scored, notes = score(records, llm=_llm(wrong), context=DreamContext(), batch_size=25)
    assert scored[0].score == 2
    assert any("unknown ids" in n for n in notes)
    assert any("kept rule scores" in n for n in notes)


def test_spent_budget_keeps_rule_scores() -> None:
    records = [rec(f"assistant note {n} on layouts", role=Role.ASSISTANT) for n in range(10)]
    fake = RecordingScorer(5)
    scored, notes = score(records, llm=_llm(fake, calls=1), context=DreamContext(), batch_size=5)
    assert [s.score for s in scored] == [5] * 5 + [2] * 5
    assert any("budget spent" in n for n in notes)


def test_a_run_of_chit_chat_is_archived_not_summarised(tmp_path: Path) -> None:
    chat = [
        ("s1", "user", "The weather is nice today."),
        ("s1", "assistant", "Got it."),
        ("s1", "user", "How are you doing?"),
        ("s1", "assistant", "Understood, thanks!"),
        ("s1", "user", "今天天气真不错。"),
        ("s1", "assistant", "text text text"),
        ("s1", "user", "Our new office is in Leeds, second floor"),
    ]
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        records = seed(memory, turns=chat)
        report = memory.dream(user_id="u1")
        archived = {c.id for c in report.archived}
        assert {r.id for r in records[:6]} <= archived
        assert not [d for d in report.distilled if d.kind == "summary" and "weather" in d.content]
        recalled = [h.record.content for h in memory.recall("weather today", user_id="u1", k=5)]
        assert all("Leeds" in text for text in recalled)  # the chit-chat is gone, the fact stays
