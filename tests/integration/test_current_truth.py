"""Done when (issue 11): across three sessions with a preference change, the prompt of the
third session shows only the new value as current, in English and Chinese, for the LangChain
agent, the LlamaIndex chat engine and the LlamaIndex FunctionAgent.

Real pieces: the frameworks, DreamMem's adapters, SQLite + FAISS on disk, MiniLM (English)
and multilingual-e5-small (Chinese). Only the chat models are the frameworks' scripted fakes.
"Current" means: a line of the memory block states the new value unmarked, and every line
that still states the old value comes after it marked ``[earlier, possibly outdated]``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import ChatMessage, MessageRole, MockLLM
from llama_index.core.workflow import Context

from dreammem import DreamMemory
from dreammem.agent_api import MEMORY_PROMPT_HEADER
from dreammem.embed.models import E5Embedder
from langchain_dreammem import DreamMemMiddleware
from langchain_dreammem.testing import ScriptedChatModel
from llamaindex_dreammem import DreamMemMemory, create_memory_tools
from tests.integration.test_llamaindex_engines import scripted

pytestmark = pytest.mark.integration

CASES = {
    "en": (
        "Hi, I'm Carol. For project updates I prefer email.",
        "Actually, call me instead of emailing - my inbox is a mess.",
        "How should you reach me about project updates?",
        ("email",),
        ("call me",),
    ),
    "zh": ("周报每周四发给我。", "以后周报都改成周五发。", "周报哪天发？", ("周四",), ("周五",)),
}
MARK = "[earlier, possibly outdated]"


Session = Callable[[DreamMemory, str, int], str]
"""One session on an open store: ``(store, user message, session number) -> the model's prompt``."""


class Ctx(TypedDict):
    user_id: str


@pytest.fixture(scope="module")
def e5() -> Any:
    return E5Embedder()


def _embedder(lang: str, minilm: Any, e5: Any) -> Any:
    return minilm if lang == "en" else e5


def assert_current(prompt: str, old: Sequence[str], new: Sequence[str]) -> None:
    """The block states the new value unmarked first; the old value only marked, after it."""
    _, header, after = prompt.partition(MEMORY_PROMPT_HEADER)
    assert header, "no memory block"
    lines = [line for line in after.split("</memory>")[0].splitlines() if line.startswith("- ")]
    current = [n for n, line in enumerate(lines) if any(v in line for v in new) and MARK not in line]
    assert current, lines
    for n, line in enumerate(lines):
        if any(v in line for v in old) and not any(v in line for v in new):
            assert MARK in line and n > current[0], lines


def three_sessions(path: Path, embedder: Any, lang: str, session: Session) -> str:
    """Run the case's three sessions, each on a freshly opened store; the prompt of the third."""
    first, second, question, _, _ = CASES[lang]
    prompt = ""
    for n, text in enumerate([first, second, question]):
        with DreamMemory(path, embedder=embedder) as store:
            prompt = session(store, text, n)
    return prompt


# -- LangChain agent ------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", list(CASES))
def test_langchain_agent_shows_only_the_new_value_as_current(
    tmp_path: Path, minilm: Any, e5: Any, lang: str
) -> None:
    def session(store: DreamMemory, text: str, n: int) -> str:
        model = ScriptedChatModel(replies=[AIMessage("Got it." if n < 2 else "ok")])
        agent = create_agent(model, middleware=[DreamMemMiddleware(store)], context_schema=Ctx)
        agent.invoke(
            {"messages": [HumanMessage(text)]},
            {"configurable": {"thread_id": f"s{n}"}},
            context=Ctx(user_id="carol"),
        )
        return str(model.prompts[0][0].text)

    prompt = three_sessions(tmp_path / "m", _embedder(lang, minilm, e5), lang, session)
    assert_current(prompt, *CASES[lang][3:])
    assert "Got it." not in prompt  # filler never reaches the prompt


# -- LlamaIndex chat engine and FunctionAgent --------------------------------------------------------


@pytest.mark.parametrize("lang", list(CASES))
def test_llamaindex_chat_engine_shows_only_the_new_value_as_current(
    tmp_path: Path, minilm: Any, e5: Any, lang: str
) -> None:
    def session(store: DreamMemory, text: str, n: int) -> str:
        llm = MockLLM(max_tokens=2) if n < 2 else MockLLM()  # the last echoes its prompt
        with DreamMemMemory.from_defaults(memory=store, user_id="carol") as memory:
            return str(SimpleChatEngine.from_defaults(llm=llm, memory=memory).chat(text))

    prompt = three_sessions(tmp_path / "m", _embedder(lang, minilm, e5), lang, session)
    assert_current(prompt, *CASES[lang][3:])


@pytest.mark.parametrize("lang", list(CASES))
def test_llamaindex_function_agent_shows_only_the_new_value_as_current(
    tmp_path: Path, minilm: Any, e5: Any, lang: str
) -> None:
    def session(store: DreamMemory, text: str, n: int) -> str:
        calls: list[Sequence[ChatMessage]] = []
        reply = ChatMessage(role=MessageRole.ASSISTANT, content="Noted.")
        agent = FunctionAgent(tools=create_memory_tools(store, user_id="carol"), llm=scripted(calls, [reply]))

        async def run() -> None:
            async with DreamMemMemory.from_defaults(memory=store, user_id="carol") as memory:
                await agent.run(user_msg=text, memory=memory, ctx=Context(agent))

        asyncio.run(run())
        return "\n".join(m.content or "" for m in calls[0])

    prompt = three_sessions(tmp_path / "m", _embedder(lang, minilm, e5), lang, session)
    assert_current(prompt, *CASES[lang][3:])
    assert "Noted." not in prompt.partition(MEMORY_PROMPT_HEADER)[2]


# -- a replacement worded away from the question ----------------------------------------------------

# Phrasings not used to build the mechanism: the old value matches the question, the new one
# (MiniLM cosine below the relevance floor) only through the record it replaced.
REWORDED = [
    ("My dentist is Dr. Okafor on Elm Street.", "Actually I moved to Dr. Brandt, Okafor retired.",
     "Who is my dentist?", "Okafor on Elm", "Brandt"),
    ("Book me aisle seats when I fly.", "Actually I'd rather sit by the window now.",
     "Which seat should I get on the plane?", "aisle", "window"),
    ("Our book club meets on Wednesdays.", "We moved it to Thursday evenings.",
     "When does the book club meet?", "Wednesdays", "Thursday"),
]  # fmt: skip


@pytest.mark.parametrize(("first", "second", "question", "old", "new"), REWORDED)
def test_the_current_value_is_recalled_though_worded_away_from_the_question(
    tmp_path: Path, minilm: Any, first: str, second: str, question: str, old: str, new: str
) -> None:
    with DreamMemory(tmp_path / "m", embedder=minilm) as memory:
        memory.add(first, user_id="u1", session_id="s1")
        memory.add(second, user_id="u1", session_id="s2")
        hits = memory.recall(question, user_id="u1", k=3).hits
    current = [n for n, h in enumerate(hits) if new in h.record.content and not h.outdated_by]
    assert current, [h.record.content for h in hits]
    assert all(h.outdated_by and n > current[0] for n, h in enumerate(hits) if old in h.record.content)
