from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from dreammem.config import DreamConfig
from dreammem.dream.context import DreamContext
from dreammem.dream.distill import compress_line, distill
from dreammem.dream.guard import uncarried_words
from dreammem.dream.llm_calls import LLMBudget, StructuredLLM, read_prompt
from dreammem.dream.patterns import cluster_observations
from dreammem.dream.score import Scored
from dreammem.embed import HashingEmbedder
from dreammem.types import Kind, Layer, MemoryRecord, Priority, Role, Status

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def rec(text: str, n: int, role: Role = Role.USER, session: str = "s1", **kw: object) -> MemoryRecord:
    return MemoryRecord(
        user_id="u",
        content=text,
        role=role,
        session_id=session,
        priority=Priority.HIGH if role is Role.USER else Priority.NORMAL,
        event_time=T0 + timedelta(minutes=n),
        **kw,  # type: ignore[arg-type]
    )


EMBED = HashingEmbedder().embed_documents


def run(items: list[Scored], llm: object | None = None, config: DreamConfig | None = None, **kw: object):  # type: ignore[no-untyped-def]
    structured = StructuredLLM(llm, LLMBudget(12, 100_000)) if llm is not None else None  # type: ignore[arg-type]
    return distill(
        items,
        history=kw.get("history", []),  # type: ignore[arg-type]
        twins=kw.get("twins", {}),  # type: ignore[arg-type]
        embed=EMBED,
        config=config or DreamConfig(),
        llm=structured,
        context=DreamContext(),
        now=T0 + timedelta(days=1),
        dream_id="d1",
    )


def test_compress_line_keeps_sentences_with_facts() -> None:
    text = "Well, it was a long day. The invoice INV-2231 is due on 2026-03-01. We laughed a lot."
    assert compress_line(text) == "The invoice INV-2231 is due on 2026-03-01."
    assert compress_line("just chatting about nothing in particular today") == (
        "just chatting about nothing in particular today"
    )
    long = "word " * 80
    assert len(compress_line(long)) <= 160 and "\n" not in compress_line("a\nb")


def test_four_five_kept_one_dropped_two_three_summarised_per_session() -> None:
    items = [
        Scored(rec("Order #1 ships Monday", 0), 4, "rules", "key entity"),
        Scored(rec("lol", 1), 1, "rules", "small talk"),
        Scored(rec("we chatted about the garden", 2), 3, "rules", "user input"),
        Scored(rec("the cat slept all afternoon", 3), 2, "rules", "user input"),
        Scored(rec("a chat in another session", 4, session="s2"), 3, "rules", "user input"),
    ]
    plan = run(items)
    assert [s.record.content for s in plan.kept] == ["Order #1 ships Monday"]
    assert [s.record.content for s in plan.dropped] == ["lol"]
    assert len(plan.summaries) == 2
    first = plan.summaries[0].record
    assert first.kind is Kind.SUMMARY and first.layer is Layer.EPISODIC
    assert first.content == "user: we chatted about the garden; user: the cat slept all afternoon"
    assert first.provenance == (items[2].record.id, items[3].record.id)
    assert first.event_time == items[3].record.event_time


def test_summary_groups_are_bounded() -> None:
    items = [Scored(rec(f"small chat number {n}", n), 2, "rules", "") for n in range(30)]
    plan = run(items, config=DreamConfig(summary_group_size=12))
    assert [len(s.replaces) for s in plan.summaries] == [12, 12, 6]


def test_repeated_observations_become_one_pattern_with_support() -> None:
    repeats = [rec("I prefer Excel reports over PDF", n) for n in range(5)]
    other = rec("I prefer CSV reports over PDF", 9)
    items = [Scored(r, 4, "rules", "explicit preference") for r in [*repeats, other]]
    plan = run(items)
    assert len(plan.patterns) == 1
    pattern = plan.patterns[0].record
    assert pattern.kind is Kind.PATTERN and pattern.layer is Layer.SEMANTIC
    assert pattern.system["support"] == 5
    assert pattern.provenance == tuple(r.id for r in repeats)
    assert pattern.content == "I prefer Excel reports over PDF"
    assert pattern.slot == "user/report format"
    assert [s.record.content for s in plan.kept] == ["I prefer CSV reports over PDF"]


def test_superseded_restatements_count_as_support_but_are_not_replaced() -> None:
    old = [rec("I prefer Excel reports over PDF", n, status=Status.SUPERSEDED) for n in range(3)]
    new = rec("I prefer Excel reports over PDF", 5)
    plan = run([Scored(new, 4, "rules", "")], history=old)
    assert plan.patterns[0].record.system["support"] == 4
    assert plan.patterns[0].replaces == (new,)


def test_clusters_need_identical_protected_tokens() -> None:
    a = rec("Budget must not exceed 50,000 RMB", 0)
    b = rec("Budget must not exceed 60,000 RMB", 1)
    c = rec("Budget must not exceed 50,000 RMB!", 2)
    groups = cluster_observations([a, b, c], EMBED, 0.5)
    assert [[r.id for r in g] for g in groups] == [[a.id, c.id], [b.id]]


class SummaryLLM:
    def __init__(self, text: str) -> None:
        self.text = text

    def __call__(self, prompt: str) -> str:
        task, payload = read_prompt(prompt)
        assert task == "summarize"
        return json.dumps({"summaries": [{"id": g["id"], "summary": self.text} for g in payload["groups"]]})


def test_a_source_whose_details_the_llm_summary_dropped_joins_it_verbatim() -> None:
    items = [
        Scored(rec("we talked about the garden", 0), 3, "rules", ""),
        Scored(rec("the plumber Mario comes on 2026-02-03", 1), 3, "llm", ""),
    ]
    plan = run(items, llm=SummaryLLM("Talked about the garden and a plumber visit"))
    (summary,) = plan.summaries
    assert summary.record.content == (
        "Talked about the garden and a plumber visit; user: the plumber Mario comes on 2026-02-03"
    )
    assert summary.replaces == tuple(i.record for i in items)
    assert summary.record.system["verbatim_lines_for"] == [items[1].record.id]
    assert plan.kept == [] and plan.guard_kept == []


def test_a_source_the_llm_summary_leaves_out_is_carried_even_with_nothing_protected() -> None:
    # Nothing in these statements is a number, a name or a limit; the summary drops two of them.
    items = [
        Scored(rec("The weekend was rainy and we stayed in, watching a documentary", 0), 3, "rules", ""),
        Scored(rec("昨天我去看了一场高铁模型展。", 1), 3, "rules", ""),
        Scored(rec("yesterday we went to the farmers market with the kids", 2), 3, "rules", ""),
    ]
    plan = run(items, llm=SummaryLLM("Rainy weekend at home watching a documentary"))
    (summary,) = plan.summaries
    assert summary.replaces == tuple(i.record for i in items)
    assert "user: 昨天我去看了一场高铁模型展。" in summary.record.content
    assert "user: yesterday we went to the farmers market with the kids" in summary.record.content
    assert summary.record.system["verbatim_lines_for"] == [i.record.id for i in items[1:]]
    assert plan.kept == []


def test_a_long_source_its_verbatim_line_cannot_carry_is_kept() -> None:
    long = (
        "We chatted for a while. Then the conversation drifted through gardening tools, heirloom seeds, "
        "compost bins, rainwater barrels, greenhouse heaters, pruning shears and mulch deliveries."
    )
    items = [
        Scored(rec("we talked about the garden", 0), 3, "rules", ""),
        Scored(rec(long, 1), 3, "rules", ""),
    ]
    plan = run(items, llm=SummaryLLM("Talked about the garden"))
    (summary,) = plan.summaries
    assert summary.replaces == (items[0].record,)
    assert [s.record.id for s in plan.kept] == [items[1].record.id]
    assert [note.record_id for note in plan.guard_kept] == [items[1].record.id]


def test_uncarried_words_tolerate_a_paraphrase_that_keeps_most_words() -> None:
    source = "I've stopped checking Slack; text me on my phone from now on."
    assert uncarried_words(source, "User stopped checking Slack; wants a text on the phone") == ()
    assert uncarried_words("紧急情况现在发短信给我。", "紧急情况现在改发短信") == ()
    assert "短信" in uncarried_words("紧急情况现在发短信给我。", "今天上午公司搞了消防演练")
    assert uncarried_words("", "anything") == ()  # nothing to carry


def test_invented_numbers_reject_the_llm_summary() -> None:
    items = [Scored(rec("we talked about the garden", 0), 3, "rules", "")]
    plan = run(items, llm=SummaryLLM("Talked about the garden for 45 minutes"))
    assert plan.summaries[0].record.content == "user: we talked about the garden"
    assert any("invents ['45']" in n for n in plan.notes)


def test_llm_pattern_phrasing_is_used_only_when_guarded() -> None:
    def phrase(prompt: str) -> str:
        _, payload = read_prompt(prompt)
        return json.dumps(
            {
                "patterns": [
                    {"id": g["id"], "pattern": "Prefers Excel reports over PDF"} for g in payload["groups"]
                ]
            }
        )

    repeats = [Scored(rec("I prefer Excel reports over PDF", n), 4, "rules", "") for n in range(3)]
    assert run(repeats, llm=phrase).patterns[0].record.content == "Prefers Excel reports over PDF"

    def lossy(prompt: str) -> str:
        _, payload = read_prompt(prompt)
        return json.dumps(
            {"patterns": [{"id": g["id"], "pattern": "Likes spreadsheets"} for g in payload["groups"]]}
        )

    plan = run(repeats, llm=lossy)
    assert plan.patterns[0].record.content == "I prefer Excel reports over PDF"
    assert any("loses protected tokens" in n for n in plan.notes)


def test_hard_limits_are_never_sent_for_rephrasing() -> None:
    asked: list[str] = []

    def spy(prompt: str) -> str:
        asked.append(prompt)
        return "{}"

    repeats = [Scored(rec("Never share the customer list with Acme", n), 5, "rules", "") for n in range(3)]
    plan = run(repeats, llm=spy)
    assert asked == []
    assert plan.patterns[0].record.content == "Never share the customer list with Acme"


def test_turns_held_by_their_semantic_twin_are_migrated() -> None:
    turn = rec("Budget must not exceed 5,000 USD", 0)
    twin = rec("Budget must not exceed 5,000 USD", 0, layer=Layer.SEMANTIC, kind=Kind.CONSTRAINT)
    plan = run([Scored(turn, 5, "rules", "")], twins={turn.id: twin})
    assert plan.migrated == [(turn, twin.id)]
    assert plan.kept == []


def test_repeated_chatter_is_summarised_not_a_pattern() -> None:
    items = [Scored(rec("we talked about the garden", n), 3, "rules", "") for n in range(4)]
    plan = run(items)
    assert plan.patterns == []
    (summary,) = plan.summaries
    assert summary.record.content == "user: we talked about the garden"  # identical lines once
    assert len(summary.replaces) == 4


def test_similar_observations_join_only_through_embeddings() -> None:
    a = rec("Call Anna before lunch", 0)
    b = rec("Call Anna before lunch please", 1)
    asked: list[list[str]] = []

    def embed(texts):  # type: ignore[no-untyped-def]
        asked.append(list(texts))
        return EMBED(texts)

    assert len(cluster_observations([a, b], None, 0.5)) == 2
    assert [len(g) for g in cluster_observations([a, b], embed, 0.5)] == [2]
    assert asked == [[a.content, b.content]]
    c = rec("Call Tom before lunch", 2)
    asked.clear()
    assert len(cluster_observations([a, c], embed, 0.1)) == 2  # different names: never embedded
    assert asked == []
