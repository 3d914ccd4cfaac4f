"""LlamaIndex adapters for DreamMem (``pip install "dreammem[llamaindex]"``).

* :class:`DreamMemMemory`: a drop-in ``memory=`` for chat engines and agents.
* :class:`DreamMemBlock`: a memory block for ``llama_index.core.memory.Memory``.
* :class:`DreamMemRetriever`: recalled memories as nodes, for RAG chat engines.
* :func:`create_memory_tools`: save / search / forget tools for agents.
* :func:`as_llm`: a LlamaIndex LLM as the core's ``prompt -> completion`` callable.

Example::

    from dreammem import DreamMemory
    from llamaindex_dreammem import DreamMemMemory
    from llama_index.core.chat_engine import SimpleChatEngine

    store = DreamMemory("./memory")
    memory = DreamMemMemory.from_defaults(memory=store, user_id="alice")
    engine = SimpleChatEngine.from_defaults(llm=my_llm, memory=memory)
"""

from llamaindex_dreammem.block import DreamMemBlock
from llamaindex_dreammem.llm import as_llm
from llamaindex_dreammem.memory import DreamMemMemory
from llamaindex_dreammem.retriever import DreamMemRetriever
from llamaindex_dreammem.tools import create_memory_tools

__all__ = ["DreamMemBlock", "DreamMemMemory", "DreamMemRetriever", "as_llm", "create_memory_tools"]
