"""A write embeds each distinct text once: a turn and the semantic record written from it share one pass."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from dreammem import DreamMemory
from dreammem.embed.base import HashingEmbedder, embed_distinct


class _Counting(HashingEmbedder):
    """The hashing embedder, recording every text it encodes as a document."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.seen.extend(texts)
        return super().embed_documents(texts)


def test_embed_distinct_gives_the_rows_of_a_full_embedding() -> None:
    texts = ["I live in Leeds", "we met Ana", "I live in Leeds", "", "we met Ana", "another"]
    counting = _Counting()
    rows = embed_distinct(counting, texts)
    assert np.array_equal(rows, HashingEmbedder().embed_documents(texts))
    assert counting.seen == ["I live in Leeds", "we met Ana", "", "another"]
    assert embed_distinct(counting, []).shape == (0, counting.dim)


def test_a_preference_turn_and_its_semantic_record_are_embedded_once(tmp_path: Path) -> None:
    counting = _Counting()
    turns = ["My favorite color is blue", "We walked along the river", "My budget is 3000 euros"]
    with DreamMemory(tmp_path / "store", embedder=counting) as memory:
        memory.add_many([{"content": t, "user_id": "u1"} for t in turns])
        semantic = memory.get_all(user_id="u1", layer="semantic")
        assert {r.content for r in semantic} >= {"My favorite color is blue"}  # a twin was written
        assert sorted(counting.seen) == sorted(turns)
        hits = memory.recall("favorite color", user_id="u1", k=5)
        assert hits and hits[0].record.content == "My favorite color is blue"
