"""Self-supervised training groups from a store's own turns (invented turns, a stub first stage)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from dreammem.errors import ConfigError
from dreammem.rerank.self_supervised import (
    SelfSupervisedConfig,
    StoredTurn,
    parse_kinds,
    self_queries,
    self_supervised_groups,
)
from dreammem.rerank.training import mine_pairs

TURNS = [
    StoredTurn("Ana: Hi Ben! How are you?", "s1", "Ana"),
    StoredTurn("Ben: Good! How was the pottery class on Sunday?", "s1", "Ben"),
    StoredTurn("Ana: The pottery class was lovely, I made a blue bowl for my mother.", "s1", "Ana"),
    StoredTurn("Ben: A blue bowl for your mother? She will love the glaze!", "s1", "Ben"),
    StoredTurn("Ben: Also my sister adopted a grey kitten named Pixel.", "s1", "Ben"),
    StoredTurn("Ana: Did the kitten settle in with the old dog at home?", "s2", "Ana"),
    StoredTurn("Ben: Pixel hides under the sofa whenever the dog barks.", "s2", "Ben"),
]


def _texts(indices: Sequence[int]) -> list[str]:
    return [TURNS[i].text for i in indices]


def test_a_question_points_at_the_answer_and_a_reply_at_what_it_answers() -> None:
    queries = self_queries(TURNS)
    pairs = {(q.kind, q.query, q.positive) for q in queries}
    assert ("question", "How was the pottery class on Sunday?", 2) in pairs
    assert ("reply", "The pottery class was lovely, I made a blue bowl for my mother.", 1) in pairs
    assert ("reply", "A blue bowl for your mother? She will love the glaze!", 2) in pairs


def test_queries_leave_out_the_speaker_and_the_statements_of_a_question_turn() -> None:
    asked = [q.query for q in self_queries(TURNS) if q.kind == "question"]
    assert all(not q.startswith(("Ana:", "Ben:")) for q in asked)
    assert "How was the pottery class on Sunday?" in asked  # without "Good!"
    # Turn 3 asks too, but the next turn is Ben's again: nobody answered it.
    assert all("blue bowl" not in q for q in asked)


def test_small_talk_makes_no_query() -> None:
    # "How are you?" has no content word; "Good! ..." answers it but is its own question.
    assert all(q.query != "How are you?" for q in self_queries(TURNS))


def test_no_pair_crosses_a_thread_or_stays_with_one_speaker() -> None:
    for q in self_queries(TURNS):
        assert abs(q.source - q.positive) == 1
        assert TURNS[q.source].thread == TURNS[q.positive].thread
        assert TURNS[q.source].speaker != TURNS[q.positive].speaker
    # Turn 3 -> 4: same speaker (Ben), so no reply pair points at turn 3 from turn 4.
    assert not any(q.kind == "reply" and q.positive == 3 for q in self_queries(TURNS))
    # Turn 4 -> 5: another thread.
    assert not any(q.positive in (4, 5) and 4 in q.guarded and 5 in q.guarded for q in self_queries(TURNS))


def test_turns_without_speakers_pair_with_the_next_turn() -> None:
    turns = [StoredTurn("where did we park the red van?", "t"), StoredTurn("behind the old mill", "t")]
    queries = self_queries(turns)
    assert [(q.kind, q.positive) for q in queries] == [("question", 1), ("reply", 0)]


def test_guarded_turns_are_never_negatives_and_mine_pairs_labels_the_rest() -> None:
    def first_stage(query: str, depth: int, /) -> list[str]:
        return [t.text for t in TURNS][:depth]

    config = SelfSupervisedConfig(kinds=("question",), depth=10, guard=0)
    groups = self_supervised_groups(TURNS, first_stage, config)
    pottery = next(g for g in groups if "pottery" in g.query)
    assert pottery.positives == (TURNS[2].text,)
    assert TURNS[1].text not in pottery.candidates  # the query's own turn
    assert TURNS[2].text not in pottery.candidates
    assert TURNS[4].text in pottery.candidates
    pairs = mine_pairs(groups, negatives=2, seed=1)
    assert {p.label for p in pairs} == {0.0, 1.0}
    assert all(p.text != TURNS[1].text for p in pairs if "pottery" in p.query)


def test_the_guard_widens_around_the_pair_inside_its_thread() -> None:
    queries = self_queries(TURNS, SelfSupervisedConfig(guard=1))
    wide = next(q for q in queries if q.query.startswith("How was"))
    assert wide.guarded == frozenset({0, 1, 2, 3})
    edge = next(q for q in self_queries(TURNS, SelfSupervisedConfig(guard=3)) if "kitten" in q.query)
    assert edge.guarded == frozenset({5, 6})  # thread s2 only


def test_the_first_stage_is_asked_once_per_query_at_the_configured_depth() -> None:
    asked: list[tuple[str, int]] = []

    def first_stage(query: str, depth: int, /) -> list[str]:
        asked.append((query, depth))
        return []

    groups = self_supervised_groups(TURNS, first_stage, SelfSupervisedConfig(depth=7))
    assert len(asked) == len(groups) == len(self_queries(TURNS))
    assert {d for _, d in asked} == {7}


def test_max_groups_is_a_seeded_sample_in_order() -> None:
    every = self_queries(TURNS)
    some = self_queries(TURNS, SelfSupervisedConfig(max_groups=2, seed=3))
    again = self_queries(TURNS, SelfSupervisedConfig(max_groups=2, seed=3))
    assert some == again and len(some) == 2
    assert [every.index(q) for q in some] == sorted(every.index(q) for q in some)


def test_chinese_question_marks_count() -> None:
    turns = [StoredTurn("你上周末去哪里爬山了？", "z", "甲"), StoredTurn("我们去了香山。", "z", "乙")]
    assert any(q.kind == "question" for q in self_queries(turns, SelfSupervisedConfig(min_query_words=1)))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kinds": ()},
        {"kinds": ("cloze",)},
        {"min_query_words": 0},
        {"depth": 0},
        {"guard": -1},
        {"max_groups": 0},
    ],
)
def test_bad_settings_are_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        SelfSupervisedConfig(**kwargs)  # type: ignore[arg-type]


def test_kinds_parse_in_order_without_repeats() -> None:
    assert parse_kinds("reply, question,reply") == ("reply", "question")
    assert parse_kinds("question") == ("question",)
    for bad in ("", " , ", "question,cloze"):
        with pytest.raises(ConfigError):
            parse_kinds(bad)
