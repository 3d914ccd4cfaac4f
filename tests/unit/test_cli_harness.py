"""``dreammem bench`` and ``train-reranker`` reach the harness lazily, and say what to install without it."""

import sys

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.cli_harness import INSTALL_HINT

runner = CliRunner()


@pytest.fixture
def without_bench_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """As if ``pip install dreammem`` had run without the extra: bm25s cannot be imported."""
    monkeypatch.setitem(sys.modules, "bm25s", None)  # a None entry makes the import fail
    for name in [m for m in sys.modules if m == "dreammem_bench" or m.startswith("dreammem_bench.")]:
        monkeypatch.delitem(sys.modules, name)


@pytest.mark.parametrize(
    "args",
    [
        ["bench", "locomo", "--data", "tests/fixtures/locomo_tiny.json"],
        ["bench", "--help"],
        ["train-reranker", "--data", "x.json", "--out", "y"],
    ],
)
def test_without_the_extra_a_harness_command_fails_with_one_line_naming_the_install(
    without_bench_extra: None, args: list[str]
) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert INSTALL_HINT in lines[0] and f"dreammem {args[0]}" in lines[0] and "bm25s" in lines[0]


def test_without_the_extra_the_core_commands_and_help_still_work(without_bench_extra: None) -> None:
    result = runner.invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "bench" in result.output and "train-reranker" in result.output and "recall" in result.output


def test_importing_the_harness_without_its_extra_names_the_install(without_bench_extra: None) -> None:
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'dreammem\[bench\]'"):
        __import__("dreammem_bench")


def test_with_the_extra_the_harness_commands_parse_and_exit_like_their_own() -> None:
    listing = runner.invoke(app, ["bench", "--help"], env={"COLUMNS": "200"})
    assert listing.exit_code == 0, listing.output
    for command in ("locomo", "throughput", "chinese", "graph", "dream", "latency"):
        assert command in listing.output
    assert "--data" in runner.invoke(app, ["train-reranker", "--help"], env={"COLUMNS": "200"}).output
    assert runner.invoke(app, ["bench", "no-such-benchmark"]).exit_code == 2
    missing_option = runner.invoke(app, ["bench", "locomo"])
    assert missing_option.exit_code == 2 and "--data" in missing_option.output
