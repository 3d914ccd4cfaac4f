"""The rough edges a new user met (issue 36): each test failed before its fix."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from typer.testing import CliRunner

import dreammem.cli
from dreammem import DreamMemory
from dreammem.cli import app, main
from dreammem.cli_progress import Advance
from dreammem.embed import HashingEmbedder
from langchain_dreammem.testing import ScriptedChatModel

runner = CliRunner()
LONG = "My grandmother's recipe for plum dumplings needs quark, semolina and a pinch of cinnamon sugar"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.add(LONG, user_id="u1", session_id="s")
        memory.add("I live in Paris", user_id="u1", session_id="s")
        memory.add("Actually, I moved to Berlin", user_id="u1", session_id="s")
    return path


def test_scripted_chat_model_takes_a_callable_reply_as_its_docstring_says() -> None:
    def echo(messages: list[BaseMessage]) -> AIMessage:
        return AIMessage(f"you said {messages[-1].content}")

    model = ScriptedChatModel(replies=[echo, AIMessage("fixed")])
    assert model.invoke([HumanMessage("hi")]).content == "you said hi"
    assert model.invoke([HumanMessage("again")]).content == "fixed"
    assert len(model.prompts) == 2


@pytest.mark.parametrize(
    "args",
    [
        ["list", "--user", "U1"],
        ["recall", "plum", "--user", "nobody"],
        ["export", "--user", "nobody"],
        ["stats", "--user", "nobody"],
        ["dream", "log", "--user", "nobody"],
        ["purge", "--all", "--user", "nobody", "--yes"],
    ],
)
def test_an_unknown_user_is_an_error_not_an_empty_table(
    store: Path, args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["dreammem", *args, "--path", str(store)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    out = capsys.readouterr()
    assert "NotFoundError: no user" in out.out + out.err
    assert "case-sensitive" in out.out + out.err


def test_piped_tables_keep_ids_and_rows_on_one_line(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        ids = [r.id for r in memory.get_all(user_id="u1", status="all")]
    env = {"COLUMNS": None}  # a pipe: no terminal, no $COLUMNS
    listed = runner.invoke(app, ["list", "--user", "u1", "--status", "all", "--path", str(store)], env=env)
    assert listed.exit_code == 0, listed.output
    for record_id in ids:
        assert record_id in listed.output  # whole, not folded over two lines
    assert any(LONG in line for line in listed.output.splitlines())
    recalled = runner.invoke(app, ["recall", "plum dumplings", "--user", "u1", "--path", str(store)], env=env)
    assert any(LONG in line for line in recalled.output.splitlines()), recalled.output


def test_the_history_of_a_new_statement_shows_what_it_replaced(tmp_path: Path) -> None:
    with DreamMemory(tmp_path / "m", embedder=HashingEmbedder()) as memory:
        memory.add("I live in Paris", user_id="u1")
        turn = memory.add("Actually, I moved to Berlin", user_id="u1")
        chain = memory.history(turn.id, user_id="u1")
    contents = [r.content for r in chain]
    assert "I live in Paris" in contents  # what the new statement replaced
    assert contents.index("I live in Paris") < contents.index("Actually, I moved to Berlin")
    assert {r.status.value for r in chain if r.content == "I live in Paris"} == {"superseded"}


@pytest.mark.parametrize("model", ["hashing", "hashing-32"])
def test_the_reindex_progress_bar_counts_what_it_embeds(
    store: Path, model: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int | None, int]] = []

    @contextmanager
    def recording(description: str, total: int | None) -> Iterator[Advance]:
        done = [0]
        yield lambda n: done.__setitem__(0, done[0] + n)
        seen.append((total, done[0]))

    monkeypatch.setattr(dreammem.cli, "progress_bar", recording)
    for _ in range(2):  # a new model, then the same one again
        result = runner.invoke(app, ["reindex", "--model", model, "--path", str(store)])
        assert result.exit_code == 0, result.output
    counted = [(total, done) for total, done in seen if total is not None]
    assert len(counted) == 2
    assert all(total == done > 0 for total, done in counted), counted


def test_get_all_takes_status_all_like_the_cli(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        everything = memory.get_all(user_id="u1", status="all")
        assert [r.id for r in everything] == [r.id for r in memory.get_all(user_id="u1", status=None)]
        assert {r.status.value for r in everything} >= {"active", "superseded"}


def test_forget_all_is_the_soft_delete_and_delete_all_is_deprecated(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        active = len(memory.get_all(user_id="u1"))
        assert memory.forget_all(user_id="u1") == active > 0
        assert memory.get_all(user_id="u1") == []
        with pytest.warns(DeprecationWarning, match="forget_all"):
            assert memory.delete_all(user_id="u1") == 0
        with pytest.warns(DeprecationWarning, match="aforget_all"):
            assert asyncio.run(memory.adelete_all(user_id="u1")) == 0
        assert asyncio.run(memory.aforget_all(user_id="u1")) == 0


def test_replay_graph_is_the_name_and_its_twin_is_areplay_graph(store: Path) -> None:
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        assert memory.replay_graph() == 0
        assert asyncio.run(memory.areplay_graph()) == 0
        with pytest.warns(DeprecationWarning, match="replay_graph"):
            assert memory.sync_graph() == 0
        with pytest.warns(DeprecationWarning, match="areplay_graph"):
            assert asyncio.run(memory.async_graph()) == 0
