"""The moves benchmark: its scoring on hand-made answers, and a small run end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem_bench.moves import moves, run_moves, score_moves
from dreammem_bench.throughput import synthetic_turns

TEXTS = [
    "Mia moved to Oslo and now works on the tent project.",
    "Tom ordered a bike for 20 USD, order #10001.",
    "Mia moved to Lima and now works on the cello project.",
    "Tom moved to Oslo and now works on the laptop project.",
]


def test_move_lines_are_read_in_the_order_said() -> None:
    assert moves(TEXTS) == [
        ("Mia", "Oslo", TEXTS[0]),
        ("Mia", "Lima", TEXTS[2]),
        ("Tom", "Oslo", TEXTS[3]),
    ]


def test_scores_count_answers_the_last_move_and_pulled_lines() -> None:
    shown = {
        "Who moved to Lima?": ([TEXTS[1], TEXTS[2]], 1),
        "Who moved to Oslo?": ([TEXTS[0], TEXTS[1]], 0),  # one of the two Oslo lines
        "Where does Mia live now?": ([TEXTS[1], TEXTS[0], TEXTS[2]], 2),  # the earlier move first
        "Where does Tom live now?": ([TEXTS[1], TEXTS[3]], 0),
    }
    found, current, pulled = score_moves(TEXTS, lambda question: shown[question])
    assert found == [1.0, 0.5]  # Lima, Oslo
    assert current == [0.0, 1.0]  # Mia, Tom
    assert pulled == [1, 0, 2, 0]


def test_a_small_run_scores_both_systems_on_every_store() -> None:
    steps: list[str] = []
    results = run_moves(HashingEmbedder(), memories=300, seeds=(7, 8), batch_size=100, on_step=steps.append)
    assert [r.system for r in results] == ["dreammem", "vector"]
    assert steps == ["store", "baseline", "store", "baseline"]
    said = [moves(synthetic_turns(300, seed=seed)) for seed in (7, 8)]
    asked = sum(len({p for _, p, _ in s}) + len({n for n, _, _ in s}) for s in said)
    dreammem, vector = results
    assert dreammem.questions == vector.questions == asked
    for r in results:
        assert 0.0 <= r.found_at_10 <= 1.0 and 0.0 <= r.current_at_3 <= 1.0
        assert set(r.to_dict()) == {"found@10", "current@3", "pulled@10", "questions"}
    assert vector.pulled_at_10 == 0.0  # a plain vector search adds nothing no search found
    assert vector.found_at_10 > 0.0  # the hashing embedder still matches the place's name


def test_the_command_writes_its_report(tmp_path: Path) -> None:
    out = tmp_path / "moves.json"
    args = ["bench", "moves", "--memories", "200", "--seeds", "7", "--embedder", "hashing"]
    args += ["--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    report = json.loads(out.read_text())
    assert report["seeds"] == [7] and set(report["systems"]) == {"dreammem", "vector"}
    assert report["systems"]["vector"]["pulled@10"] == 0.0


@pytest.mark.parametrize("seeds", ["seven", ","])
def test_the_command_refuses_seeds_that_are_not_numbers(seeds: str) -> None:
    result = CliRunner().invoke(app, ["bench", "moves", "--seeds", seeds, "--embedder", "hashing"])
    assert result.exit_code == 2 and "seed" in result.output
