"""A scripted stand-in for an LLM that answers DreamMem's dream prompts.

Deterministic and offline, so the dream benchmark and the tests can exercise the LLM
paths (batching, budget, validation, the verbatim guard) with no model. It reads the
JSON that :func:`dreammem.dream.llm_calls.build_prompt` embeds and answers like a
plausible but imperfect model: its summaries drop short records (and with them their
details), it can invent a number every N summaries, and it can answer malformed JSON
every N calls. The guard and the fallbacks must cope with all of that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from dreammem.dream.distill import compress_line
from dreammem.dream.llm_calls import read_prompt

__all__ = ["ScriptedDreamLLM"]

_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"\w+")
_CONFLICT = 0.5
_CHANGE_CUE = re.compile(
    r"\b(?:now|actually|correction|moved|changed|instead|anymore)\b|现在|更正|改成|改为|以后|不再",
    re.IGNORECASE,
)
_SHORT = 25
_LONG = 60


class ScriptedDreamLLM:
    """Answers ``score``, ``summarize``, ``patterns`` and ``conflicts`` prompts by fixed rules.

    Args:
        invent_every: Every Nth summary gets a made-up number appended (None: never).
        malformed_every: Every Nth call answers broken JSON (None: never).

    Attributes:
        tasks: The task tag of every call, in order.
    """

    def __init__(self, *, invent_every: int | None = None, malformed_every: int | None = None) -> None:
        self.invent_every = invent_every
        self.malformed_every = malformed_every
        self.tasks: list[str] = []
        self._summaries = 0
        self._handlers: dict[str, Callable[[Any], dict[str, Any]]] = {
            "score": self._score,
            "summarize": self._summarize,
            "patterns": self._patterns,
            "conflicts": self._conflicts,
        }

    def __call__(self, prompt: str) -> str:
        """Answer one dream prompt."""
        task, payload = read_prompt(prompt)
        self.tasks.append(task)
        if self.malformed_every and len(self.tasks) % self.malformed_every == 0:
            return '{"broken": [1, 2,'
        handler = self._handlers.get(task)
        if handler is None:
            return "{}"
        return "```json\n" + json.dumps(handler(payload), ensure_ascii=False) + "\n```"

    @staticmethod
    def _score(payload: Any) -> dict[str, Any]:
        scores = []
        for item in payload["records"]:
            text = item["text"]
            if len(text) < _SHORT:
                value = 1
            elif _DIGIT.search(text):
                value = 4
            else:
                value = 3 if len(text) > _LONG else 2
            scores.append({"id": item["id"], "score": value})
        return {"scores": scores}

    def _summarize(self, payload: Any) -> dict[str, Any]:
        out = []
        for group in payload["groups"]:
            self._summaries += 1
            lines = [compress_line(r["text"]) for r in group["records"] if len(r["text"]) >= _SHORT]
            text = "; ".join(lines) or group["records"][0]["text"]
            if self.invent_every and self._summaries % self.invent_every == 0:
                text += " (17 items discussed)"
            out.append({"id": group["id"], "summary": text})
        return {"summaries": out}

    @staticmethod
    def _conflicts(payload: Any) -> dict[str, Any]:
        """A change cue ("now", "actually", "更正"...), and most words shared but not all."""
        out = []
        for item in payload["items"]:
            if not _CHANGE_CUE.search(item["new"]):
                continue
            new = _words(item["new"])
            for old in item["old"]:
                words = _words(old["text"])
                shared = len(new & words) / max(1, len(new | words))
                if _CONFLICT <= shared < 1:
                    out.append({"new": item["id"], "old": old["id"]})
        return {"conflicts": out}

    @staticmethod
    def _patterns(payload: Any) -> dict[str, Any]:
        out = []
        for group in payload["groups"]:
            last = group["observations"][-1]
            prefix = "多次提到：" if re.search(r"[\u4e00-\u9fff]", last) else "Repeatedly said: "
            out.append({"id": group["id"], "pattern": prefix + last})
        return {"patterns": out}


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.casefold()))
