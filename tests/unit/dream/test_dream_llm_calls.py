from __future__ import annotations

import time

import pytest
from pydantic import BaseModel

from dreammem.dream.llm_calls import LLMBudget, StructuredLLM, build_prompt, parse_json, read_prompt
from dreammem.errors import LLMBudgetError, LLMError


class Answer(BaseModel):
    value: int


def scripted(*answers: str):  # type: ignore[no-untyped-def]
    queue = list(answers)
    prompts: list[str] = []

    def llm(prompt: str) -> str:
        prompts.append(prompt)
        return queue.pop(0)

    llm.prompts = prompts  # type: ignore[attr-defined]
    return llm


@pytest.mark.parametrize(
    "text",
    [
        '{"value": 3}',
        '```json\n{"value": 3}\n```',
        'Sure, here you go: {"value": 3} Hope this helps!',
        '{"value": 3,}',
        "{'value': 3}",
        "\u201c\u201d" and '{"value": 3, "ok": True, "none": None}',
    ],
)
def test_parse_json_repairs_common_slips(text: str) -> None:
    assert parse_json(text)["value"] == 3


def test_parse_json_rejects_prose() -> None:
    with pytest.raises(ValueError):
        parse_json("I cannot help with that")


def test_invalid_answer_is_asked_again_with_the_error() -> None:
    llm = scripted('{"value": "three"}', '{"value": 3}')
    structured = StructuredLLM(llm, LLMBudget(5, 10_000), retries=1)
    assert structured.ask("give a value", Answer, label="t").value == 3
    assert structured.usage.calls == 2
    assert "could not be used" in llm.prompts[1]  # type: ignore[attr-defined]


def test_unusable_after_retries_raises_and_is_accounted() -> None:
    structured = StructuredLLM(scripted("nope", "still nope"), LLMBudget(5, 10_000), retries=1)
    with pytest.raises(LLMError, match="unusable answer after 2 attempts"):
        structured.ask("give a value", Answer, label="t")
    assert structured.usage.calls == 2
    assert structured.usage.failures and structured.usage.failures[0].startswith("t:")


def test_call_budget_is_enforced() -> None:
    structured = StructuredLLM(scripted('{"value": 1}', '{"value": 2}'), LLMBudget(1, 10_000))
    assert structured.ask("p", Answer, label="a").value == 1
    assert structured.exhausted
    with pytest.raises(LLMBudgetError):
        structured.ask("p", Answer, label="b")
    assert structured.usage.calls == 1


def test_token_budget_is_enforced_before_calling() -> None:
    llm = scripted('{"value": 1}')
    structured = StructuredLLM(llm, LLMBudget(10, 5))
    with pytest.raises(LLMBudgetError, match="token budget"):
        structured.ask("a prompt far longer than five tokens", Answer, label="a")
    assert llm.prompts == []  # type: ignore[attr-defined]


def test_tokens_are_counted_for_prompt_and_completion() -> None:
    structured = StructuredLLM(scripted('{"value": 12345678}'), LLMBudget(10, 10_000))
    structured.ask("x" * 40, Answer, label="a")
    assert structured.usage.prompt_tokens == 10
    assert structured.usage.completion_tokens == 5
    assert structured.usage.to_dict()["tokens"] == 15


def test_timeout_does_not_hang_the_dream() -> None:
    def slow(prompt: str) -> str:
        time.sleep(2)
        return '{"value": 1}'

    structured = StructuredLLM(slow, LLMBudget(10, 10_000), timeout=0.1)
    start = time.perf_counter()
    with pytest.raises(LLMError, match="timed out"):
        structured.ask("p", Answer, label="a")
    assert time.perf_counter() - start < 1.5


def test_llm_exceptions_and_non_text_become_llm_errors() -> None:
    def boom(prompt: str) -> str:
        raise ConnectionError("refused")

    with pytest.raises(LLMError, match="ConnectionError"):
        StructuredLLM(boom, LLMBudget(3, 1000)).ask("p", Answer, label="a")
    with pytest.raises(LLMError, match="not str"):
        StructuredLLM(lambda p: 42, LLMBudget(3, 1000)).ask("p", Answer, label="a")  # type: ignore[arg-type,return-value]


def test_prompts_round_trip_through_read_prompt() -> None:
    payload = {"records": [{"id": "r1", "text": "预算不超过人民币五万元"}]}
    prompt = build_prompt("score", "Rate them.", "Task goal: x", payload, '{"scores": []}')
    assert read_prompt(prompt) == ("score", payload)
    assert read_prompt(prompt + "\n\nYour previous answer could not be used") == ("score", payload)
    with pytest.raises(ValueError):
        read_prompt("hello")
