"""What every adapter of this package shares: message conversion, argument checks, token counting."""

from __future__ import annotations

from collections.abc import Sequence

from llama_index.core.base.llms.types import ChatMessage, MessageRole, TextBlock

from dreammem.agent_api import ChatTurn, speaker_name, with_memory_block
from dreammem.errors import ValidationError
from dreammem.memory import DreamMemory
from dreammem.recall.packing import PackedContext
from dreammem.text.tokens import ApproximateTokenCounter

__all__ = ["approximate_tokenizer", "check_budget", "check_memory", "inject_system_block", "to_turns"]

# LlamaIndex has more speaker names than DreamMem; these are the same speakers.
_ROLE_ALIASES = {
    MessageRole.CHATBOT.value: "assistant",
    MessageRole.MODEL.value: "assistant",
    MessageRole.FUNCTION.value: "tool",
    MessageRole.DEVELOPER.value: "system",
}

_COUNT = ApproximateTokenCounter()


def approximate_tokenizer(text: str) -> list[int]:
    """A ``tokenizer_fn`` for LlamaIndex ``Memory`` that needs no tiktoken download.

    Only the length of the list matters to LlamaIndex; it matches DreamMem's own
    approximate counter (about four characters per token, one per CJK character).
    """
    return [0] * _COUNT(text)


def check_memory(memory: object) -> DreamMemory:
    """Return ``memory`` if it is a :class:`~dreammem.DreamMemory`, else raise ValidationError."""
    if not isinstance(memory, DreamMemory):
        raise ValidationError(f"memory must be a dreammem.DreamMemory, got {type(memory).__name__}")
    return memory


def check_budget(max_tokens: object) -> int | None:
    """Return a valid token budget (None or a positive int) or raise ValidationError."""
    if max_tokens is None:
        return None
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValidationError(f"max_tokens must be a positive int or None, got {max_tokens!r}")
    return max_tokens


def to_turns(messages: Sequence[ChatMessage]) -> list[ChatTurn]:
    """Reduce chat messages to turns (text only; messages without text become empty turns).

    ``additional_kwargs["name"]``, when a message has it, is the turn's speaker.
    """
    turns = []
    for message in messages:
        if not isinstance(message, ChatMessage):
            raise ValidationError(f"expected a llama_index ChatMessage, got {type(message).__name__}")
        role = message.role.value
        name = speaker_name(message.additional_kwargs.get("name"))
        turns.append(ChatTurn(_ROLE_ALIASES.get(role, role), message.content or "", speaker=name))
    return turns


def inject_system_block(messages: list[ChatMessage], block: PackedContext | None) -> list[ChatMessage]:
    """The messages with the memory block in one system message at the front.

    A leading system message gets the block appended as one more text block (so the
    prompt keeps a single system message); otherwise a new system message is
    inserted. The input list and its messages are not changed.
    """
    text = with_memory_block(None, block)
    if text is None:
        return messages
    if messages and messages[0].role == MessageRole.SYSTEM:
        first = messages[0]
        merged = first.model_copy(update={"blocks": [*first.blocks, TextBlock(text=text)]})
        return [merged, *messages[1:]]
    return [ChatMessage(role=MessageRole.SYSTEM, content=text), *messages]
