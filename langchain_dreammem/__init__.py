"""LangChain and LangGraph adapters for DreamMem.

* :class:`DreamMemMiddleware`: agent middleware for ``create_agent`` (recall before each
  model call, write-back after the run).
* :class:`DreamMemStore`: a LangGraph ``BaseStore`` (``create_agent(store=...)``).
* :func:`create_memory_tools`: save / search / forget memory tools.
* :class:`DreamMemRetriever`: a ``BaseRetriever`` over multi-path recall.
* :class:`DreamMemChatMessageHistory`: a ``BaseChatMessageHistory`` shim (deprecated upstream).
* :func:`as_llm`: a chat model as the core's ``LLM`` callable.

Install with ``pip install "dreammem[langchain]"``.
"""

import logging

from langchain_dreammem.history import DreamMemChatMessageHistory
from langchain_dreammem.llm import as_llm
from langchain_dreammem.middleware import DreamMemMiddleware
from langchain_dreammem.retriever import DreamMemRetriever
from langchain_dreammem.store import DreamMemStore
from langchain_dreammem.tools import create_memory_tools

__all__ = [
    "DreamMemChatMessageHistory",
    "DreamMemMiddleware",
    "DreamMemRetriever",
    "DreamMemStore",
    "as_llm",
    "create_memory_tools",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
