"""``bench updates --sources lme``: LongMemEval dev knowledge-update questions as update cases.

The data here is the hand-written tiny LongMemEval file of the tests (Porto, then Lisbon),
never the data set itself.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dreammem.cli import app
from dreammem.config import DreamMemConfig, RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem_bench.longmemeval import LmeQuestion, load_longmemeval
from dreammem_bench.updates_lme import (
    LME_SPLIT,
    LmeUpdate,
    ShownTurn,
    as_update,
    lme_updates,
    run_lme_updates,
    score_lme_update,
)
from dreammem_bench.vector_cache import DiskCachedEmbedder

FIXTURE = Path(__file__).parents[2] / "fixtures" / "longmemeval_tiny.json"


def _porto_then_lisbon() -> LmeUpdate:
    update = as_update(load_longmemeval(FIXTURE)[0])
    assert update is not None
    return update


def test_the_latest_evidence_turn_is_the_new_value_and_earlier_sessions_the_old() -> None:
    update = _porto_then_lisbon()
    assert (update.latest, update.earlier) == ("s-b#0", frozenset({"s-a#0"}))
    ku, other, abstention = load_longmemeval(FIXTURE)
    one_session = dataclasses.replace(
        ku, sessions=tuple(s for s in ku.sessions if s.session_id != "s-a"), question_id="one"
    )
    assert as_update(other) is None and as_update(abstention) is None and as_update(one_session) is None


def test_only_questions_of_the_dev_split_become_cases() -> None:
    ku, other, abstention = load_longmemeval(FIXTURE)

    def named(name: str) -> LmeQuestion:
        return dataclasses.replace(ku, question_id=name)

    # File positions 0 and 4 are dev (every fourth question); 1 is held and never read.
    questions = [named("dev-0"), named("held-1"), other, abstention, named("dev-4"), named("held-5")]
    assert [u.question.question_id for u in lme_updates(questions)] == ["dev-0", "dev-4"]


def test_current_means_in_the_top_three_and_above_any_unmarked_older_value() -> None:
    update = _porto_then_lisbon()
    new, old, other = (
        ShownTurn(frozenset({"s-b#0"}), "Lisbon", False),
        ShownTurn(frozenset({"s-a#0"}), "Porto", False),
        ShownTurn(frozenset(), "x", False),
    )
    marked_old = dataclasses.replace(old, marked=True)
    assert score_lme_update(update, [new, old]) == {
        "current@3": 1.0,
        "stale_suppressed": 0.0,
        "coverage": 1.0,
    }
    assert score_lme_update(update, [marked_old, new])["current@3"] == 1.0
    assert score_lme_update(update, [marked_old, new])["stale_suppressed"] == 1.0
    assert score_lme_update(update, [old, new])["current@3"] == 0.0
    late = score_lme_update(update, [other, other, other, new])
    assert (late["current@3"], late["coverage"]) == (0.0, 1.0)
    assert score_lme_update(update, [other]) == {"current@3": 0.0, "stale_suppressed": 1.0, "coverage": 0.0}
    # A dream summary made from both turns holds the new value: it is no stale hit.
    summary = ShownTurn(frozenset({"s-a#0", "s-b#0"}), "Porto; Lisbon", False)
    assert score_lme_update(update, [summary]) == {"current@3": 1.0, "stale_suppressed": 1.0, "coverage": 1.0}


def test_the_source_runs_both_methods_and_phases_on_a_written_haystack(tmp_path: Path) -> None:
    embedder = DiskCachedEmbedder(HashingEmbedder(), tmp_path / "v.bin")
    config = DreamMemConfig(recall=RecallConfig(relevance_floor=None))
    rows = run_lme_updates([_porto_then_lisbon()], embedder, config=config)
    found = {(r.method, r.phase, r.metric): r.value for r in rows}
    assert {(r.lang, r.split, r.n) for r in rows} == {("en", LME_SPLIT, 1)}
    assert {(m, p) for m, p, _ in found} == {
        ("vector", "write"),
        ("dreammem", "write"),
        ("dreammem", "dream-rules"),
    }
    # Three turns of user text: the Lisbon turn is recalled, and the earlier turn is never written over it.
    assert found[("dreammem", "write", "coverage")] == 1.0
    assert found[("dreammem", "write", "false_supersede")] == 0.0
    assert found[("vector", "write", "coverage")] == 1.0


@pytest.mark.slow  # loads MiniLM
def test_the_command_reports_the_source_apart(tmp_path: Path) -> None:
    out = tmp_path / "rows.json"
    args = ["bench", "updates", "--langs", "en", "--sources", "lme", "--lme-data", str(FIXTURE)]
    args += ["--lme-cache", str(tmp_path / "v.bin"), "--json", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = json.loads(out.read_text())
    assert {r["split"] for r in rows} == {LME_SPLIT} and "1 knowledge-update questions" in result.output
    assert {r["metric"] for r in rows if r["method"] == "dreammem"} == {
        "current@3",
        "stale_suppressed",
        "coverage",
        "false_supersede",
    }
