"""The runtime side-by-side of ``bench throughput``: texts, turns and report (hashing embedders)."""

from __future__ import annotations

import sys

import pytest

from dreammem.embed import HashingEmbedder
from dreammem_bench.encoders import (
    CHUNK,
    EncoderResult,
    compare_encoders,
    encoder_table,
    long_texts,
    ratio_line,
    runtime_embedders,
    runtime_sets,
)


def test_long_texts_are_deterministic_and_long() -> None:
    texts = long_texts(60)
    assert texts == long_texts(60) and texts != long_texts(60, seed=14)
    mean = sum(map(len, texts)) / len(texts)
    assert 600 < mean < 1300  # LongMemEval's turns average ~900 characters
    assert max(map(len, texts)) > 1500  # some past the model's 256-token cut
    sets = runtime_sets(40)
    assert [len(sets["short"]), len(sets["long"])] == [40, 10]
    assert max(map(len, sets["short"])) < 150


def test_the_runtimes_take_turns_chunk_by_chunk() -> None:
    steps: list[str] = []
    embedders = {"a": HashingEmbedder(16), "b": HashingEmbedder(32)}
    texts = {"short": ["x y"] * (2 * CHUNK + 1), "long": ["x y z " * 50] * 3}
    results = compare_encoders(embedders, texts, on_step=steps.append)
    assert steps[:6] == ["a short", "b short", "b short", "a short", "a short", "b short"]
    assert steps[6:] == ["a long", "b long"]
    assert [(r.runtime, r.texts, r.count) for r in results] == [
        ("a", "short", 2 * CHUNK + 1),
        ("b", "short", 2 * CHUNK + 1),
        ("a", "long", 3),
        ("b", "long", 3),
    ]
    assert all(r.wall_s > 0 and r.cpu_s > 0 and r.per_s > 0 and r.per_cpu_s > 0 for r in results)
    assert set(results[0].to_dict()) == {"texts", "wall_s", "cpu_s", "per_s", "per_cpu_s"}


def test_the_table_and_the_ratio_put_the_runtimes_side_by_side() -> None:
    results = [
        EncoderResult("numpy", "short", 100, 2.0, 4.0),
        EncoderResult("torch", "short", 100, 4.0, 4.0),
        EncoderResult("numpy", "long", 10, 1.0, 1.0),
        EncoderResult("torch", "long", 10, 1.0, 2.0),
    ]
    assert (
        ratio_line(results)
        == "numpy / torch: short 2.00x wall clock, 1.00x CPU; long 1.00x wall clock, 2.00x CPU"
    )
    assert ratio_line(results[::2]) == ""  # torch did not run
    table = encoder_table(results)
    assert [c.header for c in table.columns] == [
        "runtime", "short texts/s", "short texts/CPU-s", "long texts/s", "long texts/CPU-s",
    ]  # fmt: skip
    assert list(table.columns[0].cells) == ["numpy", "torch"]
    assert list(table.columns[4].cells) == ["10.0", "5.0"]


def test_a_runtime_that_is_not_installed_is_named_with_its_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    loaded, missing = runtime_embedders(["numpy", "torch"], batch_size=8)
    assert list(loaded) == ["numpy"] and list(missing) == ["torch"]
    assert "dreammem[torch]" in missing["torch"]
