from __future__ import annotations

from dreammem.embed import HashingEmbedder
from dreammem_bench.chinese import TOKENIZERS, load_pairs, score_embedder, score_tokenizer


def test_shipped_pairs_load() -> None:
    pairs = load_pairs()
    assert len(pairs) == 30
    assert all(memory and question and memory != question for memory, question in pairs)


def test_tokenizers_and_embedders_score_between_0_and_1() -> None:
    pairs = load_pairs()
    for name in TOKENIZERS:
        score = score_tokenizer(name, pairs)
        assert 0.0 <= score.hit_at_1 <= score.hit_at_3 <= 1.0
    jieba = score_tokenizer(next(iter(TOKENIZERS)), pairs)
    assert jieba.hit_at_3 > 0.5  # word matching finds most memories of this set
    hashed = score_embedder(HashingEmbedder(), pairs)
    assert 0.0 <= hashed.hit_at_1 <= hashed.hit_at_3 <= 1.0
