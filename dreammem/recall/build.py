"""Assemble the recall pipeline from the stores: one place that names every path."""

from __future__ import annotations

from typing import Any

from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.recall.graph import GraphPath
from dreammem.recall.keyword import KeywordPath
from dreammem.recall.naming import NamingPath
from dreammem.recall.person import PersonPath, UnnamedVectorPath
from dreammem.recall.pipeline import RecallPipeline, Reranker
from dreammem.recall.reply import ReplyPath
from dreammem.recall.second_vector import SecondIndex, SecondVectorPath
from dreammem.recall.speaker import SpeakerPath
from dreammem.recall.temporal import TemporalPath
from dreammem.recall.vector import VectorPath
from dreammem.stores.base import GraphStore, RecordStore, VectorIndex

__all__ = ["build_pipeline"]


def build_pipeline(
    store: RecordStore,
    index: VectorIndex,
    embedder: Embedder,
    graph: GraphStore,
    config: RecallConfig,
    reranker: Reranker | None,
    second: SecondIndex | None = None,
) -> RecallPipeline:
    """The pipeline over every recall path (those not in ``RecallConfig.paths`` stay idle).

    Vector, keyword, temporal, graph, the five that reuse the others'
    candidates (speaker, naming, person, unnamed and reply), and with
    a ``second`` index (the store's opt-in second embedding model) the second vector path.
    """
    paths: dict[str, Any] = {
        "vector": VectorPath(index, embedder),
        "keyword": KeywordPath(store, max_term_share=config.keyword_max_term_share),
        "temporal": TemporalPath(store, index, embedder),
        "graph": GraphPath(graph, store),
        "speaker": SpeakerPath(store),
        "naming": NamingPath(store),
        "reply": ReplyPath(store),
        "person": PersonPath(store, index, embedder),
        "unnamed": UnnamedVectorPath(store, index, embedder),
    }
    if second is not None:
        paths["second_vector"] = SecondVectorPath(second)
    return RecallPipeline(
        store, paths, config, reranker, embedder=embedder, beside=config.paths_beside_encoder
    )
