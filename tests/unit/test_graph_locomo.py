"""The LoCoMo graph ablation on a tiny LoCoMo-shaped fixture (the real data is not in the repo)."""

from __future__ import annotations

from pathlib import Path

from dreammem.embed import HashingEmbedder
from dreammem_bench.graph_locomo import PATH_SETS, load_locomo, run_locomo_graph, summary

FIXTURE = Path(__file__).parent.parent / "fixtures" / "locomo_tiny_graph.json"


def test_loader_normalises_evidence_and_skips_what_cannot_be_scored() -> None:
    (conv,) = load_locomo(FIXTURE)
    assert conv.sample_id == "tiny-1" and len(conv.turns) == 6
    assert conv.turns[2][0] == "Ann: A beagle. [shares an image: a photo of a small dog]"
    assert conv.turns[3][1].month == 6
    assert [(q.category, sorted(q.evidence)) for q in conv.questions] == [
        (1, ["D1:1", "D2:2"]),
        (2, ["D1:1"]),
        (4, ["D2:3"]),
    ]


def test_every_path_set_is_scored_per_category() -> None:
    (result,) = run_locomo_graph(load_locomo(FIXTURE), HashingEmbedder(), {"embedded": None}, k=2)
    assert set(result.hits) == set(PATH_SETS)
    assert result.n == {"1": 1, "2": 1, "4": 1, "1-4": 3}
    # The multi-hop question names Riverside: the graph reaches the adoption turn.
    assert result.hits["graph"]["1"] == 1.0
    rows = summary([result])
    assert len(rows) == 3 and rows[0]["backend"] == "embedded" and "hit@2 1-4" in rows[0]
