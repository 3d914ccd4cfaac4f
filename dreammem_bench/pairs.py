"""LoCoMo questions (and, optionally, annotated observations) as reranker training groups.

Beside them, :func:`locomo_self_groups` makes groups from a conversation's turns
alone (:mod:`dreammem.rerank.self_supervised`), as a user with no annotations would.

Question -> evidence turns, with BM25 hard negatives from the same conversation.
Observations ("Caroline attended an LGBTQ support group", from turn D1:3) are
statements rather than questions but pair a paraphrase with the turn it rests on,
which more than doubles the relevance pairs a conversation gives.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.config import DreamMemConfig
from dreammem.embed.base import Embedder
from dreammem.rerank.self_supervised import SelfSupervisedConfig, StoredTurn, self_supervised_groups
from dreammem.rerank.training import QueryGroup
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import BM25Method, DreamMemMethod

__all__ = ["locomo_query_groups", "locomo_self_groups", "locomo_stored_turns"]


def locomo_query_groups(
    conversations: Sequence[LocomoConversation], *, depth: int = 30, observations: bool = False
) -> list[QueryGroup]:
    """One group per question (and per observation when ``observations`` is set).

    Its evidence turns are the positives; the BM25 top ``depth`` turns of its
    conversation (filled up with other turns when BM25 finds fewer) are the
    negative pool.
    """
    groups: list[QueryGroup] = []
    bm25 = BM25Method()
    for conversation in conversations:
        bm25.index(conversation)
        by_id = {t.dia_id: t.content for t in conversation.turns}
        items = [(q.question, q.evidence) for q in conversation.questions]
        if observations:
            items += [(o.text, o.evidence) for o in conversation.observations]
        for query, evidence in items:
            ranked = bm25.ranked(conversation, query, depth)
            # Few shared words: fill the pool with other turns (easy negatives).
            ranked += [i for i in range(len(conversation.turns)) if i not in ranked][: depth - len(ranked)]
            groups.append(
                QueryGroup(
                    query=query,
                    positives=tuple(by_id[d] for d in evidence),
                    candidates=tuple(conversation.turns[i].content for i in ranked),
                )
            )
    return groups


def locomo_stored_turns(conversation: LocomoConversation) -> list[StoredTurn]:
    """A conversation's turns as a store holds them (content, session, speaker)."""
    return [StoredTurn(t.content, f"session_{t.session}", t.speaker) for t in conversation.turns]


def locomo_self_groups(
    conversation: LocomoConversation,
    *,
    config: DreamMemConfig | None = None,
    embedder: Embedder | None = None,
    self_config: SelfSupervisedConfig | None = None,
) -> list[QueryGroup]:
    """Self-supervised groups from one conversation's turns alone (never its questions).

    The conversation is written to a fresh in-memory DreamMem store as the benchmark
    writes it; the store's own recall (no reranker) is the negative pool.
    """
    method = DreamMemMethod(config, embedder=embedder, name="dreammem-self-pairs")
    try:
        method.index(conversation)
        memory, user, now = method.memory, conversation.sample_id, conversation.reference_time

        def first_stage(query: str, depth: int, /) -> list[str]:
            return [hit.record.content for hit in memory.recall(query, user_id=user, k=depth, now=now)]

        return self_supervised_groups(locomo_stored_turns(conversation), first_stage, self_config)
    finally:
        method.close()
