"""Structured LLM calls for dreaming: JSON out, validated, repaired, retried, budgeted.

The core's LLM is a plain ``prompt -> completion`` callable (:class:`dreammem.llm.LLM`).
:class:`StructuredLLM` wraps it for one dream:

* every answer is parsed as JSON (code fences, prose around the JSON, trailing commas,
  single quotes and Python literals are repaired) and validated against a pydantic
  model; an unusable answer is asked again (``retries`` times) with the error shown;
* each call runs with a timeout;
* a budget caps calls and tokens (prompt + completion, counted by an approximate
  counter); :attr:`StructuredLLM.usage` accounts for what was spent.

Any failure raises :class:`~dreammem.errors.LLMError` (or
:class:`~dreammem.errors.LLMBudgetError`); the dream stages catch it and fall back to
rules, noting it in the report.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from dreammem.errors import LLMBudgetError, LLMError
from dreammem.llm import LLM
from dreammem.text.tokens import ApproximateTokenCounter, TokenCounter

__all__ = ["LLMBudget", "LLMUsage", "StructuredLLM", "build_prompt", "parse_json", "read_prompt"]

log = logging.getLogger(__name__)

ModelT = TypeVar("ModelT", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PY_LITERALS = ((re.compile(r"\bTrue\b"), "true"), (re.compile(r"\bFalse\b"), "false"))
_PY_NONE = re.compile(r"\bNone\b")


@dataclass(frozen=True, slots=True)
class LLMBudget:
    """What one dream may spend on the LLM.

    Attributes:
        max_calls: Calls allowed (retries count).
        max_tokens: Prompt plus completion tokens allowed.
    """

    max_calls: int
    max_tokens: int


@dataclass(slots=True)
class LLMUsage:
    """What a dream spent on the LLM, and what went wrong."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict."""
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens": self.tokens,
            "failures": list(self.failures),
        }


def parse_json(text: str) -> Any:
    """Parse the JSON in an LLM answer, repairing the usual slips.

    Raises:
        ValueError: no JSON value can be read from the text.
    """
    candidates = [text.strip()]
    fenced = _FENCE.search(text)
    if fenced:
        candidates.insert(0, fenced.group(1).strip())
    for opener, closer in (("{", "}"), ("[", "]")):
        start, end = text.find(opener), text.rfind(closer)
        if 0 <= start < end:
            candidates.append(text[start : end + 1])
    for candidate in candidates:
        for attempt in (candidate, _repair(candidate)):
            try:
                return json.loads(attempt)
            except ValueError:
                continue
    raise ValueError("no JSON object found in the answer")


def _repair(text: str) -> str:
    fixed = _TRAILING_COMMA.sub(r"\1", text)
    fixed = fixed.replace("\u201c", '"').replace("\u201d", '"')
    for pattern, value in _PY_LITERALS:
        fixed = pattern.sub(value, fixed)
    fixed = _PY_NONE.sub("null", fixed)
    if '"' not in fixed and "'" in fixed:
        fixed = fixed.replace("'", '"')
    return fixed


class StructuredLLM:
    """One dream's view of the LLM: JSON answers, a timeout, a budget and accounting.

    Args:
        llm: The ``prompt -> completion`` callable.
        budget: The dream's budget.
        timeout: Seconds to wait for one call (``None``: no limit).
        retries: Re-asks after an answer that does not parse or validate.
        counter: Token counter (approximate by default).
    """

    def __init__(
        self,
        llm: LLM,
        budget: LLMBudget,
        *,
        timeout: float | None = 60.0,
        retries: int = 1,
        counter: TokenCounter | None = None,
    ) -> None:
        self._llm = llm
        self.budget = budget
        self.timeout = timeout
        self.retries = retries
        self._count = counter or ApproximateTokenCounter()
        self.usage = LLMUsage()

    @property
    def exhausted(self) -> bool:
        """True when not even one more call fits the budget."""
        return self.usage.calls >= self.budget.max_calls or self.usage.tokens >= self.budget.max_tokens

    def ask(self, prompt: str, schema: type[ModelT], *, label: str) -> ModelT:
        """Ask for a JSON answer that validates against ``schema``.

        Args:
            prompt: The prompt; it should say which JSON shape to answer with.
            schema: The pydantic model the answer must validate against.
            label: Names the call in failure notes (e.g. ``"score batch 2"``).

        Raises:
            LLMBudgetError: the budget does not allow the call.
            LLMError: the LLM failed, timed out, or never answered usable JSON.
        """
        current = prompt
        problem = ""
        for _ in range(self.retries + 1):
            answer = self._complete(current, label)
            try:
                return schema.model_validate(parse_json(answer))
            except (ValueError, PydanticValidationError) as exc:
                problem = _short(exc)
                # The answer (quoted in the error) carries memory text: only DEBUG may show it.
                log.info("LLM answer for %s unusable (%s)", label, type(exc).__name__)
                log.debug("LLM answer for %s unusable: %s", label, problem)
                current = (
                    f"{prompt}\n\nYour previous answer could not be used ({problem}). "
                    "Answer again with only the JSON object, nothing else."
                )
        note = f"{label}: unusable answer after {self.retries + 1} attempts ({problem})"
        self.usage.failures.append(note)
        raise LLMError(note)

    def _complete(self, prompt: str, label: str) -> str:
        prompt_tokens = self._count(prompt)
        if self.usage.calls >= self.budget.max_calls:
            note = f"{label}: call budget of {self.budget.max_calls} spent"
            self.usage.failures.append(note)
            raise LLMBudgetError(note)
        if self.usage.tokens + prompt_tokens > self.budget.max_tokens:
            note = f"{label}: token budget of {self.budget.max_tokens} spent"
            self.usage.failures.append(note)
            raise LLMBudgetError(note)
        self.usage.calls += 1
        self.usage.prompt_tokens += prompt_tokens
        try:
            answer = _call_with_timeout(self._llm, prompt, self.timeout)
        except LLMError as exc:
            self.usage.failures.append(f"{label}: {exc}")
            raise
        if not isinstance(answer, str):
            note = f"{label}: the LLM returned {type(answer).__name__}, not str"
            self.usage.failures.append(note)
            raise LLMError(note)
        self.usage.completion_tokens += self._count(answer)
        return answer


def _call_with_timeout(llm: LLM, prompt: str, timeout: float | None) -> Any:
    """Run the LLM in a daemon thread so a hung call cannot hang the dream."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["answer"] = llm(prompt)
        except BaseException as exc:  # handed to the caller below
            outcome["error"] = exc

    worker = threading.Thread(target=target, name="dreammem-llm", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise LLMError(f"timed out after {timeout:g}s")
    if "error" in outcome:
        error = outcome["error"]
        raise LLMError(f"the LLM raised {type(error).__name__}: {_short(error)}") from error
    return outcome.get("answer")


def _short(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


_INPUT = "INPUT:\n"
_ANSWER = "\nANSWER FORMAT:"


def build_prompt(task: str, instructions: str, context: str, payload: Any, answer_shape: str) -> str:
    """A dream prompt: a task tag, instructions, context, JSON input, the answer shape.

    The ``TASK:`` line and the JSON after ``INPUT:`` make prompts machine-readable, so
    scripted test LLMs (and logs) can read exactly what was asked.
    """
    body = json.dumps(payload, ensure_ascii=False)
    return (
        f"TASK: {task}\n{instructions}\n\n{context}\n\n{_INPUT}{body}\n{_ANSWER} "
        f"reply with only this JSON: {answer_shape}"
    )


def read_prompt(prompt: str) -> tuple[str, Any]:
    """The task tag and the JSON input of a prompt made by :func:`build_prompt`.

    Raises:
        ValueError: the prompt was not made by :func:`build_prompt`.
    """
    if not prompt.startswith("TASK: ") or _INPUT not in prompt:
        raise ValueError("not a dream prompt")
    task = prompt[6 : prompt.index("\n")]
    start = prompt.index(_INPUT) + len(_INPUT)
    end = prompt.index(_ANSWER, start)
    return task, json.loads(prompt[start:end])
