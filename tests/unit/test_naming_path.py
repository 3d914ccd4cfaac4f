"""The naming recall path: a question asking for a list of things votes for lines that name some."""

from __future__ import annotations

import dataclasses

import pytest

from dreammem import DreamMemory
from dreammem.config import RecallConfig
from dreammem.embed import HashingEmbedder
from dreammem.recall.naming import NamingPath, asks_for_names, names_in
from tests.transcripts import T0, contents, keyword_query, said_by, transcript_memory

LINES = [
    "Ana: I love trying new restaurants with friends, Leo.",
    "Leo: Restaurants here are packed on Fridays.",
    "Ana: Last week we tried Casa Lisboa and the ramen place near Alfama, both great restaurants.",
    'Ana: Thanks, Leo! My favourite restaurants book is "Salt Fat Acid Heat".',
    "Ana: Restaurants and friends, that is my weekend.",
    "Ana: We went back to Casa Lisboa on Friday, my favourite of the restaurants.",
]


def _memory() -> DreamMemory:
    return transcript_memory(
        LINES,
        "Ana: We tried Casa Lisboa, great restaurants.",
        paths=("vector", "keyword", "temporal", "graph"),
    )


@pytest.mark.parametrize(
    "question",
    [
        "Which restaurants did Ana try in Lisbon?",
        "What podcasts does Leo listen to?",
        "what board games has she played lately",
        "In which cities did they live?",
        "What kinds of music does Ana like?",
        "她读过哪些书？",
        "你们去过哪几个国家？",
    ],
)
def test_list_questions_ask_for_names(question: str) -> None:
    assert asks_for_names(question)


@pytest.mark.parametrize(
    "question",
    [
        "What does Ana think of Lisbon?",
        "What is the plan for Friday?",
        "Which is better, tea or coffee?",
        "What happened at the meeting?",
        "When did Leo move?",
        "What address does the class use?",
        "她喜欢什么书？",
        "",
    ],
)
def test_other_questions_do_not(question: str) -> None:
    assert not asks_for_names(question)


def test_names_are_inner_capitals_acronyms_quotes_and_chinese_names() -> None:
    assert names_in("We flew to Porto, then NYC.") == ("porto", "nyc")
    assert names_in('I finished "the long way home" last night') == ("the long way home",)
    assert names_in("Yesterday was fun. Really fun!") == ()  # sentence-initial words are no names
    assert names_in("See you on Friday in May") == ()  # times, not things
    assert "北京" in names_in("我上个月去了北京和上海。")


def test_the_path_keeps_the_lines_that_name_something_in_the_vote_order() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "Which restaurants has Ana tried?")
        keyword = contents(memory, list(query.earlier["keyword"]))

        found = NamingPath(memory.store, sources=("keyword",)).search(query)

        named = [line for line in keyword if "Casa Lisboa" in line or "Salt Fat" in line]
        assert contents(memory, found) == named and len(set(named)) == 3  # a turn and its fact twin
        assert [c.score for c in found] == sorted((c.score for c in found), reverse=True)


def test_speakers_and_the_questions_own_words_are_not_names() -> None:
    with _memory() as memory:
        # "Leo" addresses a speaker, "Friday" is a time, "Casa Lisboa" the question names already:
        # the line naming nothing else is left out, the one naming Alfama too stays.
        query = keyword_query(memory, "Which restaurants besides Casa Lisboa has Ana tried?")
        found = contents(memory, NamingPath(memory.store, sources=("keyword",)).search(query))
        assert LINES[5] not in found and LINES[0] not in found and LINES[1] not in found
        assert LINES[2] in found and LINES[3] in found


def test_a_question_asking_for_no_list_or_no_candidates_finds_nothing() -> None:
    with _memory() as memory:
        path = NamingPath(memory.store, sources=("keyword",))
        assert path.search(keyword_query(memory, "What does Ana think of restaurants?")) == []
        assert path.search(dataclasses.replace(keyword_query(memory, "Which restaurants?"), earlier={})) == []


def test_the_path_stays_inside_the_user() -> None:
    with _memory() as memory:
        query = keyword_query(memory, "Which restaurants has Ana tried?", user="u2")
        found = NamingPath(memory.store, sources=("keyword",)).search(query)
        assert contents(memory, found, user="u2") == ["Ana: We tried Casa Lisboa, great restaurants."]


def test_recall_runs_it_by_default() -> None:
    assert "naming" in RecallConfig().active_paths
    with DreamMemory(None, embedder=HashingEmbedder()) as memory:
        memory.add_many(
            [
                {
                    "content": line,
                    "user_id": "u1",
                    "session_id": "s1",
                    "speaker": said_by(line),
                    "event_time": T0,
                }
                for line in LINES
            ]
        )
        result = memory.recall("Which restaurants has Ana tried?", user_id="u1", k=5, now=T0)
        assert any("naming" in hit.paths for hit in result)


def test_chinese_lines_name_places_by_their_tags() -> None:
    lines = [
        "小王：我上个月去了北京和上海，城市很大。",
        "小王：我很喜欢去城市旅行。",
        "小李：小王，城市旅行累不累？",
    ]
    with transcript_memory(lines, "小王：我去过杭州这个城市。", paths=("vector", "keyword")) as memory:
        query = keyword_query(memory, "小王去过哪些城市？")
        found = contents(memory, NamingPath(memory.store, sources=("keyword",)).search(query))
        assert set(found) == {lines[0]}  # the speakers 小王 / 小李 are no answer
