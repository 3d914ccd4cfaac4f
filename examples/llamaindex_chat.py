"""A LlamaIndex chat engine that remembers the user across sessions, offline by default.

Run it (no API key, no network):

    python examples/llamaindex_chat.py                 # a temporary store
    python examples/llamaindex_chat.py --path ./memory --user alice

Session 1 tells the assistant a few things; the store is closed. Session 2 opens the
same store again, as a restarted app would, and asks a question. The default LLM is
LlamaIndex's MockLLM, which answers by echoing the prompt it received, so the output
shows exactly what DreamMem injected. Put your own LLM in ``make_llm`` (for example
``llama_index.llms.openai.OpenAI`` or ``llama_index.llms.ollama.Ollama``).
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from llama_index.core.chat_engine import SimpleChatEngine
from llama_index.core.llms import LLM, MockLLM

from dreammem import DreamMemory
from llamaindex_dreammem import DreamMemMemory

SESSION_1 = [
    "Hi! I prefer window seats when I fly.",
    "My budget for the Oslo trip is 1,200 EUR.",
    "My dog Biscuit stays with my sister while I travel.",
]
SESSION_2 = "Please book my flight to Oslo. Which seat should I pick, and what can I spend?"


def make_llm(*, replies: bool) -> LLM:
    """The model. MockLLM echoes prompts (``replies=True``: short filler replies instead)."""
    return MockLLM(max_tokens=5) if replies else MockLLM()


def run_session(path: Path, user: str, messages: list[str], llm: LLM) -> str:
    """One app run: open the store, chat, close the store. Returns the last reply."""
    with DreamMemory(path) as store, DreamMemMemory.from_defaults(memory=store, user_id=user) as memory:
        engine = SimpleChatEngine.from_defaults(
            llm=llm, memory=memory, system_prompt="You are a travel agent."
        )
        reply = ""
        for message in messages:
            reply = str(engine.chat(message))
        return reply


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--path", type=Path, default=None, help="store directory (default: a temporary one)")
    parser.add_argument("--user", default="alice", help="user id")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the embedding model ships in a package

    with tempfile.TemporaryDirectory() as tmp:
        path = args.path or Path(tmp) / "memory"
        run_session(path, args.user, SESSION_1, make_llm(replies=True))
        print(f"Session 1 stored {len(SESSION_1)} messages in {path}.\n")
        prompt = run_session(path, args.user, [SESSION_2], make_llm(replies=False))
        print("Session 2: the prompt the LLM received (MockLLM echoes it):\n")
        print(prompt)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
