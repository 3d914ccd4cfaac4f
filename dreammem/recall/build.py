"""Assemble the recall pipeline from the stores: the one place that constructs each path.

What each path is (weight, what it reads, how the gate judges it) is in
:mod:`dreammem.recall.recipe`; this module only builds them, with the configuration's
settings passed on.
"""

from __future__ import annotations

from collections.abc import Callable

from dreammem.config import RecallConfig
from dreammem.embed.base import Embedder
from dreammem.recall.base import RecallPath
from dreammem.recall.bridge import BridgePath
from dreammem.recall.graph import GraphPath
from dreammem.recall.keyword import KeywordPath
from dreammem.recall.naming import NamingPath
from dreammem.recall.person import PersonPath, UnnamedVectorPath
from dreammem.recall.pipeline import RecallPipeline, Reranker
from dreammem.recall.recipe import PATHS
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
    """The pipeline over every recall path of the recipe (those not configured stay idle).

    The ``second_vector`` path exists only with a ``second`` index (the store's opt-in
    second embedding model).
    """
    k = config.rrf_k
    builders: dict[str, Callable[[], RecallPath]] = {
        "vector": lambda: VectorPath(index, embedder),
        "keyword": lambda: KeywordPath(store, max_term_share=config.keyword_max_term_share),
        "temporal": lambda: TemporalPath(store, index, embedder),
        "graph": lambda: GraphPath(graph, store),
        "reply": lambda: ReplyPath(store, rrf_k=k),
        "bridge": lambda: BridgePath(graph, store, rrf_k=k),
        "speaker": lambda: SpeakerPath(store, rrf_k=k),
        "naming": lambda: NamingPath(store, rrf_k=k),
        "person": lambda: PersonPath(store, index, embedder),
        "unnamed": lambda: UnnamedVectorPath(store, index, embedder),
    }
    if second is not None:
        builders["second_vector"] = lambda: SecondVectorPath(second)
    assert set(builders) <= set(PATHS), "every path built has a spec in the recipe"
    paths = {name: build() for name, build in builders.items()}
    return RecallPipeline(
        store, paths, config, reranker, embedder=embedder, beside=config.paths_beside_encoder
    )
