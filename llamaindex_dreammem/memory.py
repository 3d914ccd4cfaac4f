"""A drop-in ``memory=`` for LlamaIndex chat engines and agents, backed by DreamMem."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Self

from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.bridge.pydantic import Field, PrivateAttr, SerializeAsAny
from llama_index.core.memory import BaseMemory, Memory
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from dreammem.agent_api import ChatTurn, history_block, ingest_turns
from dreammem.memory import DreamMemory
from dreammem.validation import check_id, check_k, check_user_id
from llamaindex_dreammem._shared import (
    approximate_tokenizer,
    check_budget,
    check_memory,
    inject_system_block,
    to_turns,
)

__all__ = ["DreamMemMemory"]

DEFAULT_TOKEN_LIMIT = 30_000
_SHORT_TERM_DATABASE = "sqlite+aiosqlite:///:memory:"  # LlamaIndex's default chat store


class DreamMemMemory(BaseMemory):
    """Short-term chat history plus DreamMem long-term memory, as one LlamaIndex memory.

    Pass it as ``memory=`` to ``SimpleChatEngine``, ``ContextChatEngine``,
    ``CondensePlusContextChatEngine``, ``FunctionAgent`` or ``ReActAgent``:

    * every message put into it is written through DreamMem's write path (idempotently:
      putting the same history again stores nothing twice) and kept in the short-term
      memory;
    * :meth:`get` returns the short-term history with the memories recalled for the
      ``input`` (or, without one, for the last user message) in one system message.

    The sync methods are the implementation and the async ones (``aget``, ``aput``, ...)
    run them in a worker thread, so recall and embedding never block the event loop.
    Calls are serialised by a lock and nothing is bound to an event loop, so one memory
    works from notebooks, from several threads, and from the fresh event loops LlamaIndex
    starts in worker threads. (LlamaIndex's in-memory short-term store breaks when two
    event loops use it at once; the lock prevents that. A ``short_term`` of your own
    must tolerate a new event loop per call, as LlamaIndex's sync methods need anyway.)
    Build it with :meth:`from_defaults`, and :meth:`close` it when done (or use it as a
    context manager, ``with`` or ``async with``): the default short-term memory holds an
    in-memory SQLite database on an aiosqlite worker thread.

    Notes for the engines: ``CondensePlusContextChatEngine`` condenses whenever ``get``
    returns messages, so with recalled memories it condenses from the first turn on
    (one LLM call more, and the standalone question sees the memories). Pairing this
    memory with :class:`DreamMemRetriever` in a context engine shows the same memories
    twice; give the engine your document retriever instead, or use the retriever with
    a plain ``Memory``.

    Attributes:
        user_id: Whose memory this is; every read and write is scoped by it.
        session_id: This conversation (also the short-term memory's key).
        k: How many memories to inject at most (pinned ones from their budget).
        max_tokens: Token budget of the injected block (default: the DreamMem config's share
            of the model window).
        short_term: The short-term chat memory (a LlamaIndex ``Memory`` by default).
    """

    user_id: str
    session_id: str
    k: int = Field(default=5, ge=1, le=1000)
    max_tokens: int | None = Field(default=None, ge=1)
    short_term: SerializeAsAny[BaseMemory]

    _memory: DreamMemory = PrivateAttr()
    _before_reset: list[ChatTurn] = PrivateAttr(default_factory=list)
    _lock: threading.RLock = PrivateAttr(default_factory=threading.RLock)
    _engine: AsyncEngine | None = PrivateAttr(default=None)

    def __init__(
        self,
        *,
        memory: DreamMemory,
        user_id: str,
        session_id: str,
        short_term: BaseMemory,
        k: int = 5,
        max_tokens: int | None = None,
    ) -> None:
        """Wrap ``short_term``; prefer :meth:`from_defaults`, which builds it for you.

        Raises:
            ScopeError: ``user_id`` is missing or malformed.
            ValidationError: ``memory``, ``session_id``, ``k`` or ``max_tokens`` is invalid.
        """
        store = check_memory(memory)
        super().__init__(
            user_id=check_user_id(user_id),
            session_id=check_id(session_id, "session_id"),
            k=check_k(k),
            max_tokens=check_budget(max_tokens),
            short_term=short_term,
        )
        self._memory = store

    @classmethod
    def class_name(cls) -> str:
        """The LlamaIndex component name."""
        return "DreamMemMemory"

    @classmethod
    def from_defaults(  # type: ignore[override]
        cls,
        *,
        memory: DreamMemory,
        user_id: str,
        session_id: str | None = None,
        k: int = 5,
        max_tokens: int | None = None,
        chat_history: list[ChatMessage] | None = None,
        short_term: BaseMemory | None = None,
        token_limit: int = DEFAULT_TOKEN_LIMIT,
        tokenizer_fn: Callable[[str], list[Any]] | None = None,
    ) -> DreamMemMemory:
        """Build the memory.

        Args:
            memory: The DreamMem store (open it once per process and share it).
            user_id: The user; required.
            session_id: This conversation; ``None`` starts a new one (a random id).
            k: How many ranked memories to inject.
            max_tokens: Token budget of the injected block.
            chat_history: Messages to start from (they are written to long-term memory too).
            short_term: Your own short-term memory; by default a LlamaIndex ``Memory``
                keyed by ``session_id`` with ``token_limit`` and ``tokenizer_fn``.
            token_limit: Token limit of the default short-term memory.
            tokenizer_fn: Token counter of the default short-term memory; the default
                is an approximate counter that needs no tiktoken download.

        Raises:
            ScopeError: ``user_id`` is missing or malformed.
            ValidationError: ``memory``, ``session_id`` or ``k`` is invalid.
        """
        check_memory(memory)
        check_user_id(user_id)
        session = check_id(session_id, "session_id") or uuid.uuid4().hex
        engine = None
        if short_term is None:
            # Our own engine for LlamaIndex's chat store, so that close() can dispose it.
            engine = create_async_engine(_SHORT_TERM_DATABASE)
            short_term = Memory.from_defaults(
                session_id=session,
                token_limit=token_limit,
                tokenizer_fn=tokenizer_fn or approximate_tokenizer,
                async_engine=engine,
            )
        built = cls(
            memory=memory,
            user_id=user_id,
            session_id=session,
            k=k,
            max_tokens=max_tokens,
            short_term=short_term,
        )
        built._engine = engine
        if chat_history:
            built.set(chat_history)
        return built

    @property
    def tokenizer_fn(self) -> Callable[[str], list[Any]]:
        """The short-term memory's token counter (``SimpleChatEngine`` looks for it)."""
        fn: Callable[[str], list[Any]] = getattr(self.short_term, "tokenizer_fn", approximate_tokenizer)
        return fn

    @property
    def memory(self) -> DreamMemory:
        """The DreamMem store behind this memory."""
        return self._memory

    def close(self) -> None:
        """Close the default short-term memory's database (idempotent).

        Only the one :meth:`from_defaults` opened (LlamaIndex's in-memory SQLite chat
        store, on an aiosqlite thread that otherwise outlives the memory and stops at
        garbage collection, on whatever event loop is current then); a ``short_term`` of
        your own is yours to close. The short-term history is gone afterwards; the
        long-term memories stay in DreamMem.
        """
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is not None:
            _run_in_own_loop(engine.dispose())

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (in a worker thread, like the other ``a*`` methods)."""
        await asyncio.to_thread(self.close)

    def __enter__(self) -> Self:
        """Use as ``with DreamMemMemory.from_defaults(...) as memory:`` (closed on exit)."""
        return self

    def __exit__(self, *exc_info: object) -> None:
        """Close the default short-term memory (see :meth:`close`)."""
        self.close()

    async def __aenter__(self) -> Self:
        """Use as ``async with ...`` (closed on exit)."""
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        """Close the default short-term memory without blocking the loop (see :meth:`aclose`)."""
        await self.aclose()

    # -- helpers (call with the lock held) -------------------------------------------------

    def _ingest(self, history: list[ChatMessage]) -> None:
        turns = [*self._before_reset, *to_turns(history)]
        ingest_turns(self._memory, turns, user_id=self.user_id, session_id=self.session_id)

    def _with_recall(self, history: list[ChatMessage], input: str | None) -> list[ChatMessage]:
        block = history_block(
            self._memory,
            to_turns(history),
            user_id=self.user_id,
            query=input,
            k=self.k,
            max_tokens=self.max_tokens,
            session_id=self.session_id,
        )
        return inject_system_block(history, block)

    # -- BaseMemory (the a* twins are BaseMemory's: this method in a worker thread) -----------

    def get(self, input: str | ChatMessage | None = None, **kwargs: Any) -> list[ChatMessage]:
        """The short-term history with recalled long-term memories in one system message.

        Args:
            input: The new user message (text or ``ChatMessage``), when the caller has not
                put it yet; the recall query. Without it, the last user message of the
                history is the query.
            **kwargs: Passed to the short-term memory (e.g. ``initial_token_count``).
        """
        query = input.content if isinstance(input, ChatMessage) else input
        with self._lock:
            history = self.short_term.get(input=query, **kwargs)
            return self._with_recall(history, query)

    def get_all(self) -> list[ChatMessage]:
        """The whole short-term history of this session, without recalled memories."""
        with self._lock:
            return self.short_term.get_all()

    def put(self, message: ChatMessage) -> None:
        """Write one message to long-term memory and to the short-term history.

        Raises:
            ValidationError: the message is not a ``ChatMessage`` or its text is too long;
                nothing is written then.
        """
        self.put_messages([message])

    def put_messages(self, messages: list[ChatMessage]) -> None:
        """Write messages to long-term memory (one batch) and to the short-term history."""
        new = list(messages)
        to_turns(new)  # reject bad input before anything is written
        with self._lock:
            self._ingest([*self.short_term.get_all(), *new])
            self.short_term.put_messages(new)

    def set(self, messages: list[ChatMessage]) -> None:
        """Replace the short-term history; messages not stored yet go to long-term memory."""
        new = list(messages)
        with self._lock:
            self._ingest(new)
            self.short_term.set(new)

    def reset(self) -> None:
        """Clear the short-term history. Long-term memories stay (use ``forget`` for those)."""
        with self._lock:
            self._before_reset.extend(to_turns(self.short_term.get_all()))
            self.short_term.reset()


def _run_in_own_loop(work: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to the end on a fresh event loop in a thread of its own.

    Works whether or not the caller's thread runs a loop (a notebook does).
    """
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, work).result()
