"""DreamMem as an MCP server (``dreammem mcp``), on the official ``mcp`` SDK.

* :mod:`~dreammem.mcp_server.users`: whose memory a call reaches (one user, or the user
  bound to the caller's bearer token);
* :mod:`~dreammem.mcp_server.tools`: the tools (remember, add, recall, get, list, history,
  update, forget, purge, dream) over the public :class:`~dreammem.DreamMemory` API;
* :mod:`~dreammem.mcp_server.outputs`: what each tool returns;
* :mod:`~dreammem.mcp_server.serve`: the server over stdio or streamable HTTP.

Install with ``pip install "dreammem[mcp]"``; see docs/guides/mcp.md.
"""

from dreammem.mcp_server.serve import build_server, http_app, run_http, run_stdio
from dreammem.mcp_server.tools import MemoryTools
from dreammem.mcp_server.users import TokenUsers, UserBinding, binding_for, load_tokens

__all__ = [
    "MemoryTools",
    "TokenUsers",
    "UserBinding",
    "binding_for",
    "build_server",
    "http_app",
    "load_tokens",
    "run_http",
    "run_stdio",
]
