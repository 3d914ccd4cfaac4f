"""LoCoMo questions (and, optionally, annotated observations) as reranker training groups.

Question -> evidence turns, with BM25 hard negatives from the same conversation.
Observations ("Caroline attended an LGBTQ support group", from turn D1:3) are
statements rather than questions but pair a paraphrase with the turn it rests on,
which more than doubles the relevance pairs a conversation gives.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.rerank.training import QueryGroup
from dreammem_bench.locomo import LocomoConversation
from dreammem_bench.methods import BM25Method

__all__ = ["locomo_query_groups"]


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
