"""LoCoMo questions as reranker training groups.

Question -> evidence turns, with BM25 hard negatives from the same conversation.
"""

from __future__ import annotations

from collections.abc import Sequence

from dreammem.bench.locomo import LocomoConversation
from dreammem.bench.methods import BM25Method
from dreammem.rerank.training import QueryGroup

__all__ = ["locomo_query_groups"]


def locomo_query_groups(conversations: Sequence[LocomoConversation], *, depth: int = 30) -> list[QueryGroup]:
    """One group per question.

    Its evidence turns are the positives; the BM25 top ``depth`` turns of its
    conversation (filled up with other turns when BM25 finds fewer) are the
    negative pool.
    """
    groups: list[QueryGroup] = []
    bm25 = BM25Method()
    for conversation in conversations:
        bm25.index(conversation)
        by_id = {t.dia_id: t.content for t in conversation.turns}
        for question in conversation.questions:
            ranked = bm25.ranked(conversation, question.question, depth)
            # Few shared words: fill the pool with other turns (easy negatives).
            ranked += [i for i in range(len(conversation.turns)) if i not in ranked][: depth - len(ranked)]
            groups.append(
                QueryGroup(
                    query=question.question,
                    positives=tuple(by_id[d] for d in question.evidence),
                    candidates=tuple(conversation.turns[i].content for i in ranked),
                )
            )
    return groups
