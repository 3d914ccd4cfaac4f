"""`dreammem mcp` as a host runs it: the SDK's own client over stdio and streamable HTTP, a real store.

stdio: the client spawns ``python -m dreammem mcp`` as a host does. HTTP: the server runs
as a subprocess on 127.0.0.1 with two bearer tokens, and each token must see only its
own user's memories. The store uses the packaged MiniLM (the default embedder).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
TOOLS = {"remember", "add", "recall", "get", "list", "history", "update", "forget", "purge", "dream"}
TOKEN_A = "token-for-alice-0123456789"
TOKEN_B = "token-for-bob-9876543210ab"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


def _texts(result: CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, TextContent)]


def _data(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, _texts(result)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def _error(result: CallToolResult) -> str:
    """The typed error class of a failed call (asserting it failed the typed way)."""
    assert result.is_error
    assert isinstance(result.structured_content, dict), _texts(result)
    kind = str(result.structured_content["error"])
    assert _texts(result)[0].startswith(f"{kind}: ")
    return kind


async def test_stdio_server_saves_recalls_edits_and_refuses_bad_arguments(tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dreammem", "mcp", "--user", "alice", "--path", str(tmp_path / "store")],
        env=_env(),
        cwd=str(tmp_path),
    )
    async with Client(params, read_timeout_seconds=120) as client:
        listed = await client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        names = {name for tool in listed.tools for name in tool.input_schema["properties"]}
        assert not [name for name in names if "user" in name]  # no tool lets a client name a user

        saved = _data(
            await client.call_tool("remember", {"content": "Our Q3 budget must not exceed 50,000 USD."})
        )
        turn = _data(
            await client.call_tool("add", {"content": "Order #48213 ships on 2024-07-15.", "role": "tool"})
        )
        recalled = await client.call_tool("recall", {"query": "How much can we spend in Q3?", "k": 3})
        found = _data(recalled)
        block, hits_text = _texts(recalled)
        assert block == found["block"]
        assert "<memory>" in block and "50,000 USD" in block and block.startswith("Long-term memory")
        top = found["hits"][0]
        assert top["id"] == saved["id"] and top["source"].startswith("assistant said")
        assert top["role"] == "assistant" and top["event_time"][:4].isdigit()
        assert saved["id"] in hits_text and "assistant said" in hits_text

        shipped = _data(await client.call_tool("recall", {"query": "When does order 48213 ship?", "k": 3}))
        assert shipped["hits"][0]["id"] == turn["id"] and shipped["hits"][0]["role"] == "tool"
        assert "tool returned" in shipped["block"]

        record = _data(await client.call_tool("get", {"memory_id": saved["id"]}))["record"]
        assert (
            record["content"] == "Our Q3 budget must not exceed 50,000 USD." and record["user_id"] == "alice"
        )
        await client.call_tool(
            "update", {"memory_id": saved["id"], "content": "Our Q3 budget is 60,000 USD."}
        )
        versions = _data(await client.call_tool("history", {"memory_id": saved["id"]}))["versions"]
        assert [v["content"] for v in versions] == [
            "Our Q3 budget must not exceed 50,000 USD.",
            "Our Q3 budget is 60,000 USD.",
        ]
        page = _data(await client.call_tool("list", {"limit": 1}))
        assert len(page["records"]) == 1 and page["next_offset"] == 1

        # Bad arguments: typed errors, and the server goes on serving.
        assert _error(await client.call_tool("get", {"memory_id": "0" * 32})) == "NotFoundError"
        assert _error(await client.call_tool("recall", {"query": "   "})) == "ValidationError"
        assert _error(await client.call_tool("list", {"limit": 0})) == "ValidationError"
        assert _error(await client.call_tool("purge", {})) == "ValidationError"
        assert _error(await client.call_tool("update", {"memory_id": "x" * 300, "content": "y"})) in {
            "NotFoundError",
            "ValidationError",
        }
        schema_error = await client.call_tool("recall", {"query": "budget", "k": "many"})
        assert schema_error.is_error and "k" in _texts(schema_error)[0]
        missing = await client.call_tool("update", {"memory_id": saved["id"]})
        assert missing.is_error and "content" in _texts(missing)[0]
        unknown = await client.call_tool("no_such_tool", {})
        assert unknown.is_error

        forgotten = _data(await client.call_tool("forget", {"memory_id": saved["id"]}))["record"]
        assert forgotten["status"] == "deleted"
        after = _data(await client.call_tool("recall", {"query": "How much can we spend in Q3?"}))
        assert saved["id"] not in [hit["id"] for hit in after["hits"]]
        report = _data(await client.call_tool("dream", {"dry_run": True}))["report"]
        assert report["dry_run"] is True and report["mode"] == "rules"
        purged = _data(await client.call_tool("purge", {"memory_id": turn["id"]}))
        assert turn["id"] in purged["purged"] and not purged["dry_run"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """``dreammem mcp --transport http`` with two tokens (alice, bob), as a subprocess."""
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(f'"{TOKEN_A}" = "alice"\n"{TOKEN_B}" = "bob"\n', encoding="utf-8")
    port = _free_port()
    command = [sys.executable, "-m", "dreammem", "mcp", "--transport", "http", "--port", str(port)]
    command += ["--tokens", str(tokens), "--path", str(tmp_path / "store")]
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(command, env=_env(), cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, (tmp_path / "server.log").read_text(errors="replace")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "the MCP server did not start listening"
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


@asynccontextmanager
async def _client(url: str, token: str | None) -> AsyncIterator[Client]:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        Client(streamable_http_client(url, http_client=http), read_timeout_seconds=120) as client,
    ):
        yield client


async def test_http_tokens_never_see_each_others_memories(http_server: str) -> None:
    async with _client(http_server, TOKEN_A) as alice:
        secret = _data(await alice.call_tool("remember", {"content": "My locker code is 4817."}))
        _data(await alice.call_tool("add", {"content": "I moved to Lisbon in March."}))
        assert secret["id"] in [
            h["id"] for h in _data(await alice.call_tool("recall", {"query": "locker code"}))["hits"]
        ]
    async with _client(http_server, TOKEN_B) as bob:
        mine = _data(await bob.call_tool("remember", {"content": "My locker code is 2290."}))
        found = _data(await bob.call_tool("recall", {"query": "locker code", "k": 10}))
        assert [h["id"] for h in found["hits"]] == [mine["id"]]
        assert "4817" not in found["block"] and "Lisbon" not in str(found)
        listed = _data(await bob.call_tool("list", {"status": "all", "limit": 100}))
        assert {r["user_id"] for r in listed["records"]} == {"bob"}
        for tool, arguments in (
            ("get", {"memory_id": secret["id"]}),
            ("history", {"memory_id": secret["id"]}),
            ("update", {"memory_id": secret["id"], "content": "hacked"}),
            ("forget", {"memory_id": secret["id"]}),
            ("purge", {"memory_id": secret["id"]}),
        ):
            assert _error(await bob.call_tool(tool, arguments)) == "NotFoundError", tool
        purged = _data(await bob.call_tool("purge", {"everything": True}))
        assert purged["purged"] == [mine["id"]]
    async with _client(http_server, TOKEN_A) as alice:
        record = _data(await alice.call_tool("get", {"memory_id": secret["id"]}))["record"]
        assert record["content"] == "My locker code is 4817." and record["status"] == "active"


async def test_http_refuses_a_request_without_a_known_token(http_server: str) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx2.AsyncClient(timeout=30) as http:
        for token in (None, "not-a-configured-token-at-all", TOKEN_A[:-1]):
            sent = headers if token is None else {**headers, "Authorization": f"Bearer {token}"}
            response = await http.post(http_server, json=initialize, headers=sent)
            assert response.status_code == 401, token
        accepted = await http.post(
            http_server, json=initialize, headers={**headers, "Authorization": f"Bearer {TOKEN_A}"}
        )
        assert accepted.status_code == 200
