"""The shipped update benchmark suite: sizes, splits, conversations and per-question scoring."""

from __future__ import annotations

from collections import Counter

import pytest

from dreammem_bench.updates import build_conversations, load_suite, parse_suite
from dreammem_bench.updates_run import CaseResult, Shown, run_updates, score_case


def test_the_suite_has_the_sizes_the_issue_asks_for() -> None:
    suite = load_suite()
    updates = [c for c in suite.cases if c.kind == "update"]
    keeps = [c for c in suite.cases if c.kind == "keep"]
    assert len(updates) >= 150 and len(keeps) >= 30 and len(suite.unrelated) >= 30
    assert len({c.family for c in updates}) >= 15
    langs = Counter(c.lang for c in updates)
    assert langs["en"] == langs["zh"]
    # Not one template: no two update statements are the same sentence.
    assert len({c.second for c in updates}) == len(updates)
    held = sum(c.split == "held" for c in suite.cases) / len(suite.cases)
    assert 0.2 < held < 0.4


def test_conversations_state_each_case_once_with_filler_between() -> None:
    suite = load_suite()
    convs = build_conversations(suite)
    stated = [c for conv in convs for c in conv.cases]
    assert sorted(map(id, stated)) == sorted(map(id, suite.cases))
    for conv in convs:
        assert len({c.family for c in conv.cases}) == len(conv.cases)
        texts = [t.content for t in conv.turns]
        for case in conv.cases:
            assert texts.index(case.first) + 4 < texts.index(case.second)
    asked = [q for conv in convs for q in conv.unrelated]
    assert len(asked) == len(suite.unrelated)
    assert build_conversations(suite) == convs  # deterministic


def test_a_malformed_line_is_an_error() -> None:
    with pytest.raises(ValueError, match="line 1"):
        parse_suite("U en contact | only two | parts")


def test_scoring_of_one_update_question() -> None:
    (case,) = parse_suite("U en drink | old milk | new oat milk | q?").cases
    good = score_case(case, [Shown("new oat milk", False), Shown("old milk", True)], set())
    assert good["current@3"] == 1 and good["stale_suppressed"] == 1 and good["precision"] == 1
    bad = score_case(
        case, [Shown("old milk", False), Shown("new oat milk", False), Shown("ok", False)], {"ok"}
    )
    assert bad["current@3"] == 0 and bad["stale_suppressed"] == 0 and bad["filler_top3"] == 1
    assert bad["precision"] == pytest.approx(1 / 3)


_TINY = """
U en hobby | I play tennis on Saturdays. | I quit tennis; Saturdays are for climbing now. | My Saturdays?
K en pets | I have a cat called Miso. | We also have a rabbit called Pip. | Which pets do I have?
N en | What's the capital of Peru?
C en | My neighbour bought a new car.
C en | The bus was late again.
C en | I baked bread on Sunday.
F en | Thanks!
F en | Okay.
"""


def test_cases_record_each_question_per_method_and_phase(tmp_path, minilm) -> None:  # type: ignore[no-untyped-def]
    suite = parse_suite(_TINY)
    convs = build_conversations(suite)
    cases: list[CaseResult] = []
    rows = run_updates(suite, convs, {"en": minilm}, tmp_path, cases=cases)
    phases = {(c.method, c.phase) for c in cases}
    assert phases == {
        ("vector", "write"),
        ("vector+recency", "write"),
        ("dreammem", "write"),
        ("dreammem", "dream-rules"),
        ("dreammem", "dream-llm"),
    }
    assert len(cases) == 5 * 3  # two cases and one no-memory question, per method and phase
    update = next(c for c in cases if c.kind == "update" and c.phase == "dream-rules")
    assert update.question == "My Saturdays?" and update.user_id == convs[0].user_id
    assert set(update.metrics) >= {"current@3", "stale_suppressed", "precision", "coverage"}
    # The per-question metrics are what the rows average.
    row = next(r for r in rows if (r.method, r.phase, r.metric) == ("dreammem", "dream-rules", "current@3"))
    assert row.value == update.metrics["current@3"] and row.n == 1
    keep = next(c for c in cases if c.kind == "keep" and c.phase == "write" and c.method == "dreammem")
    assert "false_supersede" in keep.metrics
    assert all(isinstance(text, str) and isinstance(marked, bool) for text, marked in keep.shown)
    assert {c.kind for c in cases} == {"update", "keep", "none"}


def test_the_independent_sources_are_apart_and_play_the_assistants_echo() -> None:
    dev, held = load_suite("independent"), load_suite("independent-held")
    assert {c.split for c in dev.cases} == {"indep"} and {c.split for c in held.cases} == {"indep-held"}
    assert not {c.first for c in dev.cases} & {c.first for c in held.cases}
    assert {c.lang for c in dev.cases} == {"en", "zh"} == {c.lang for c in held.cases}
    echoed = [c for c in dev.cases if c.echo]
    assert echoed
    convs = build_conversations(dev, prefix="independent-")
    assert all(c.user_id.startswith("independent-") for c in convs)
    for conv in convs:
        turns = list(conv.turns)
        for case in conv.cases:
            if case.echo:
                said = next(i for i, t in enumerate(turns) if t.content == case.first)
                assert (turns[said + 1].role, turns[said + 1].content) == ("assistant", case.echo)
