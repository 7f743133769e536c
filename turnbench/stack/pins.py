"""The one pinned version of each server, shared by every provider (docs/design.md §9).

OpenSearch 2.19.6 is the newest 2.19 patch at which every module the embedded provider loads resolves from
Maven Central, that still runs on Java 17, and for which the k-NN plugin zip (2.19.6.0) is published too, so a
dense arm can be added without moving the pin. (2.19.1 lacks search-pipeline-common on Maven Central.)
"""

from __future__ import annotations

OPENSEARCH_VERSION = "2.19.6"
# What 2.19.6 reports as lucene_version; a stack reporting anything else is not the pinned one.
LUCENE_VERSION = "9.12.3"
POSTGRES_MAJOR = "15"

# The official images the docker provider runs unless told otherwise (--opensearch-image, --postgres-image).
OPENSEARCH_IMAGE = f"opensearchproject/opensearch:{OPENSEARCH_VERSION}"
POSTGRES_IMAGE = f"postgres:{POSTGRES_MAJOR}"
# What compose/images/build.sh tags its builds (no registry needed): never an official image's name, so that a
# result can never claim the official image when a local build ran.
LOCAL_IMAGE_PREFIX = "turnbench-local"
LOCAL_OPENSEARCH_IMAGE = f"{LOCAL_IMAGE_PREFIX}/opensearch:{OPENSEARCH_VERSION}"
LOCAL_POSTGRES_IMAGE = f"{LOCAL_IMAGE_PREFIX}/postgres:{POSTGRES_MAJOR}"

MIN_JAVA_MAJOR = 17

# The modules a distribution ships that turnbench needs, as classpath plugins: (Maven artifact, plugin class).
# Class names checked against the 2.19.6 jars; 3.x renamed several of them, so do not mix 2.x and 3.x.
OPENSEARCH_PLUGINS = (
    ("transport-netty4-client", "org.opensearch.transport.Netty4Plugin"),
    ("analysis-common", "org.opensearch.analysis.common.CommonAnalysisPlugin"),
    ("mapper-extras-client", "org.opensearch.index.mapper.MapperExtrasPlugin"),
    ("aggs-matrix-stats-client", "org.opensearch.search.aggregations.matrix.MatrixAggregationPlugin"),
    ("lang-painless", "org.opensearch.painless.PainlessPlugin"),
    ("search-pipeline-common", "org.opensearch.search.pipeline.common.SearchPipelineCommonModulePlugin"),
    ("reindex-client", "org.opensearch.index.reindex.ReindexPlugin"),
    # the dense and hybrid arms (zips on Maven Central, their jars unpacked onto the classpath): knn_vector with the
    # Lucene engine, knn_score, the knn query; the hybrid query, normalization- and score-ranker-processor
    ("opensearch-knn", "org.opensearch.knn.plugin.KNNPlugin"),
    ("neural-search", "org.opensearch.neuralsearch.plugin.NeuralSearch"),
)
# What a stack must hold for an arm that needs a vector field, as _cat/plugins names the installed components
# (an OpenSearch distribution installs them as opensearch-knn and opensearch-neural-search).
VECTOR_PLUGINS = ("opensearch-knn", "opensearch-neural-search")
# k-NN engines with native libraries: not on the embedded node's classpath (faiss fails at flush, nmslib is gone)
NATIVE_KNN_ENGINES = ("faiss", "nmslib")
# set to "none" by an image built without those libraries (compose/images/opensearch), read back before a load
KNN_NATIVE_ATTRIBUTE = "turnbench_knn_native"


def plugin_classes() -> tuple[str, ...]:
    return tuple(cls for _, cls in OPENSEARCH_PLUGINS)
