"""A LangChain agent that remembers a user across sessions, with DreamMem.

Offline by default: a scripted chat model stands in for the LLM, so you can watch
what DreamMem injects and what the memory tools return. Pass a real model to talk
to it instead (its provider package and API key are yours to install and set):

    python examples/langchain_agent.py
    python examples/langchain_agent.py --model openai:gpt-4o-mini
"""

from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Sequence
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from dreammem import DreamMemory
from langchain_dreammem import DreamMemMiddleware, DreamMemStore, create_memory_tools
from langchain_dreammem.testing import ScriptedChatModel

SESSIONS = [
    ["I prefer window seats on flights.", "My travel budget must not exceed 2,000 USD."],
    ["Please book my flight to Tokyo next month."],
]


def scripted_model(session: int) -> ScriptedChatModel:
    """What a model might answer in each session, tool calls included."""
    if session == 0:
        return ScriptedChatModel(replies=[AIMessage("Noted: window seats."), AIMessage("Understood.")])
    search = {"name": "search_memory", "args": {"query": "seat preference and budget"}, "id": "call-1"}
    return ScriptedChatModel(
        replies=[AIMessage("", tool_calls=[search]), AIMessage("Booking a window seat under 2,000 USD.")]
    )


def real_model(name: str) -> BaseChatModel:
    """A provider model by "provider:model" name (needs its package and API key)."""
    from langchain.chat_models import init_chat_model  # noqa: PLC0415 - only with a real provider model

    return init_chat_model(name)


def run(path: str, model_name: str | None = None, user_id: str = "alice") -> list[str]:
    """Run both sessions, reopening the store in between; return the printed lines."""
    lines: list[str] = []
    for session, turns in enumerate(SESSIONS):
        model = real_model(model_name) if model_name else scripted_model(session)
        with DreamMemory(path) as memory:  # a new object on the same path each session
            agent: Any = create_agent(
                model,
                tools=create_memory_tools(memory),
                system_prompt="You are a travel assistant. Use the memory tools when useful.",
                middleware=[DreamMemMiddleware(memory)],
                store=DreamMemStore(memory),
                checkpointer=InMemorySaver(),
            )
            config: Any = {"configurable": {"thread_id": f"session-{session + 1}"}}
            lines.append(f"== session {session + 1}")
            for text in turns:
                out = agent.invoke({"messages": [HumanMessage(text)]}, config, context={"user_id": user_id})
                lines.append(f"user: {text}")
                tools = [m for m in out["messages"][-3:] if isinstance(m, ToolMessage)]
                lines.extend(f"tool {m.name}: {m.text}" for m in tools)
                lines.append(f"assistant: {out['messages'][-1].text}")
        if isinstance(model, ScriptedChatModel):
            first = model.prompts[0][0]
            if isinstance(first, SystemMessage):
                lines.append("system message the model saw on its first call:")
                lines.extend("   " + line for line in first.text.splitlines())
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", help='a real chat model, e.g. "openai:gpt-4o-mini" (default: scripted)')
    parser.add_argument("--path", help="where to keep the memory (default: a temporary directory)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        for line in run(args.path or scratch, args.model):
            print(line)


if __name__ == "__main__":
    main()
