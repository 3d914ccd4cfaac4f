"""The CLI prints memory text as text: rich markup in a memory can neither crash nor style it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem import DreamMemory, NotFoundError
from dreammem.cli import app, main
from dreammem.embed import HashingEmbedder

runner = CliRunner()
MARKUP = "closing [/] tag and [bold red]styled[/bold red] text, a [link=x]link[/link]"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "cli-store"
    with DreamMemory(path, embedder=HashingEmbedder()) as memory:
        memory.add("My budget is 5000 USD", user_id="u1", session_id="s")
        memory.add("Actually my budget is 7000 USD", user_id="u1", session_id="s")
        for _ in range(3):
            memory.add(f"I prefer {MARKUP}", user_id="u1", session_id="s")
    return path


def _run(*args: str) -> str:
    result = runner.invoke(app, list(args), catch_exceptions=False, env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result.output


def test_recall_inspect_and_dream_print_markup_verbatim(store: Path) -> None:
    out = _run("recall", "closing tag styled", "--user", "u1", "--path", str(store))
    assert "[/]" in out and "[bold red]styled[/bold red]" in out
    with DreamMemory(store, embedder=HashingEmbedder()) as memory:
        (budget,) = [r for r in memory.get_all(user_id="u1", layer="semantic") if "budget" in r.content]
    history = _run("inspect", budget.id, "--user", "u1", "--path", str(store))
    assert "superseded" in history and "5000 USD" in history
    dream = _run("dream", "--user", "u1", "--path", str(store))
    assert "[bold red]styled[/bold red]" in dream


def test_errors_with_markup_in_the_input_print_cleanly(
    store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["dreammem", "inspect", "[/]nope", "--user", "u1", "--path", str(store)])
    monkeypatch.setenv("COLUMNS", "300")
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    assert isinstance(exit_info.value.__cause__, NotFoundError)
    captured = capsys.readouterr()
    assert captured.out.startswith("error: NotFoundError: no memory '[/]nope' for user 'u1' "), captured
    assert captured.out.count("\n") == 1 and not captured.err, captured


def test_python_dash_m_runs_the_cli(tmp_path: Path) -> None:
    for module in ("dreammem", "dreammem.cli"):
        done = subprocess.run(
            [sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 0 and "demo" in done.stdout, done.stderr
