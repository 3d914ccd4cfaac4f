"""Self-supervised groups from a real store (SQLite + FAISS, hashing embedder), and the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import dreammem_bench.train_cli as train_cli
from dreammem.cli import app
from dreammem.embed import HashingEmbedder
from dreammem.errors import ScopeError
from dreammem.memory import DreamMemory
from dreammem.rerank.self_supervised import SelfSupervisedConfig
from dreammem.rerank.training import TrainingConfig, TrainingPair
from dreammem.self_training import store_groups, store_turns

START = datetime(2026, 5, 1, 18, 0, tzinfo=UTC)
SESSIONS = [
    [
        ("Ana", "Ben, how was the pottery class on Sunday afternoon?"),
        ("Ben", "The pottery class was lovely, I glazed a blue bowl for my mother."),
        ("Ana", "A blue bowl sounds perfect for your mother's kitchen shelf."),
    ],
    [
        ("Ben", "Did your sister's grey kitten settle in with the old dog?"),
        ("Ana", "Pixel the kitten hides under the sofa whenever the dog barks."),
    ],
]


def _fill(memory: DreamMemory, user: str) -> None:
    for number, session in enumerate(SESSIONS):
        memory.add_many(
            {
                "content": f"{speaker}: {text}",
                "user_id": user,
                "session_id": f"s{number}",
                "role": "user",
                "speaker": speaker,
                "event_time": START + timedelta(days=number),  # one time per session, as LoCoMo
            }
            for speaker, text in session
        )


@pytest.fixture
def memory() -> DreamMemory:
    store = DreamMemory(None, embedder=HashingEmbedder())
    _fill(store, "ana")
    return store


def test_turns_come_back_in_the_order_they_were_said_with_session_and_speaker(memory: DreamMemory) -> None:
    turns = store_turns(memory, user_id="ana")
    assert [t.text.split(": ", 1)[1] for t in turns] == [text for s in SESSIONS for _, text in s]
    assert [t.thread for t in turns] == ["s0", "s0", "s0", "s1", "s1"]
    assert [t.speaker for t in turns] == [speaker for s in SESSIONS for speaker, _ in s]


def test_groups_point_questions_at_answers_with_the_stores_recall_as_negatives(memory: DreamMemory) -> None:
    groups = store_groups(memory, user_id="ana", config=SelfSupervisedConfig(depth=10, guard=0), now=START)
    pottery = next(g for g in groups if g.query == "Ben, how was the pottery class on Sunday afternoon?")
    assert pottery.positives == ("Ben: The pottery class was lovely, I glazed a blue bowl for my mother.",)
    assert pottery.candidates and all(c not in pottery.positives for c in pottery.candidates)
    assert all(not c.startswith("Ana: Ben, how was") for c in pottery.candidates)
    # Nothing crosses the session boundary: the kitten question answers in its own session.
    kitten = next(g for g in groups if g.query.startswith("Did your sister's"))
    assert kitten.positives[0].startswith("Ana: Pixel")


def test_another_users_turns_are_not_read(memory: DreamMemory) -> None:
    assert store_turns(memory, user_id="nobody") == []
    with pytest.raises(ScopeError):
        store_turns(memory, user_id="")


def test_train_reranker_from_a_store_trains_on_its_users_turns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store"
    with DreamMemory(path, embedder=HashingEmbedder()) as store:
        _fill(store, "ana")
        _fill(store, "ben")
    seen: dict[str, Any] = {}

    def fake_train(pairs: Sequence[TrainingPair], out: Path, *, config: TrainingConfig) -> Path:
        seen.update(pairs=list(pairs), config=config)
        return Path(out)

    monkeypatch.setattr(train_cli, "train_cross_encoder", fake_train)
    monkeypatch.setattr(train_cli, "open_store", lambda p: DreamMemory(p, embedder=HashingEmbedder()))
    args = ["train-reranker", "--store", str(path), "--user", "ben", "--out", str(tmp_path / "m")]
    result = CliRunner().invoke(app, [*args, "--num-layers", "3"])
    assert result.exit_code == 0, result.output
    assert "self-supervised queries from the turns of ben" in result.output
    assert "of ana" not in result.output
    assert {p.label for p in seen["pairs"]} == {0.0, 1.0}
    assert seen["config"].num_layers == 3


def test_train_reranker_needs_data_or_a_store(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["train-reranker", "--out", str(tmp_path / "m")])
    assert result.exit_code != 0
    assert "--store" in str(result.exception) or "--store" in result.output
