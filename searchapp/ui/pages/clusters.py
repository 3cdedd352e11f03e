"""Clusters page: what a corpus is about, as a map of named clusters.

The page only asks: a stored result for (corpus, model, settings) is shown at
once; otherwise a button queues a ``clusters`` job and its progress shows until
the worker has stored the result. The map colours documents by cluster (hover:
shortened text and cluster label), a search can be drawn on it, and choosing a
cluster lists its documents. Above ``MAP_MAX_POINTS`` documents the map draws
an even sample of every cluster and says so. From ``PREVIEW_MIN_DOCUMENTS`` up,
a first view (k-means and PCA on a sample, in seconds) shows while the job runs.
"""

from __future__ import annotations

import time

import streamlit as st

from searchapp import clusters as cl
from searchapp.clusters import ClusterParams
from searchapp.clusters.preview import PREVIEW_GROUPS, PREVIEW_MIN_DOCUMENTS, preview
from searchapp.search.service import search
from searchapp.ui.charts_clusters import cluster_map, size_bars
from searchapp.ui.common import (
    corpus_picker,
    corpus_summaries_or_stop,
    job_progress,
    md_escape,
    page_app,
    user_errors,
)
from searchapp.vectors.handle import CorpusHandle, open_corpus

SEARCH_HITS = 20
METHOD_NAMES = {"community": "Communities (similarity threshold)",
                "hdbscan": "HDBSCAN (density)", "kmeans": "k-means (fixed number)"}

app = page_app()
st.title("Clusters")
summaries = corpus_summaries_or_stop(app)
corpus = corpus_picker(summaries)


def settings() -> ClusterParams:
    """The sidebar: method and its parameters (0 means "chosen from the corpus size")."""
    with st.sidebar:
        st.subheader("Clustering")
        method = st.selectbox("Method", cl.METHODS, format_func=METHOD_NAMES.get,
                              key="clusters.method")
        k = min_size = threshold = None
        if method == "kmeans":
            k = st.number_input("Clusters (k), 0 = automatic", 0, cl.MAX_K, 0,
                                key="clusters.k") or None
        else:
            min_size = st.number_input("Smallest cluster, 0 = automatic", 0, 100_000, 0,
                                       key="clusters.min_size") or None
        if method == "community":
            threshold = st.slider("Similarity threshold (cosine)", 0.3, 0.95,
                                  cl.DEFAULT_THRESHOLD, 0.05, key="clusters.threshold",
                                  help="Documents this similar to a centre join its cluster.")
        projection = st.radio("Map", cl.PROJECTIONS, key="clusters.projection",
                              format_func={"umap": "UMAP", "pca": "PCA (fast)"}.get,
                              horizontal=True)
    return ClusterParams(method, k, min_size, threshold, projection).validated()


def first_view(handle: CorpusHandle) -> None:
    """A large corpus: k-means groups and a PCA map of a sample, in seconds, until the job ends."""
    if handle.index.count < PREVIEW_MIN_DOCUMENTS:
        return
    started = time.perf_counter()
    frame = preview(app, handle)
    sizes = frame.cluster.value_counts().to_dict()
    st.caption(f"First view while the full map is computed: {len(frame):,} of "
               f"{handle.index.count:,} documents sampled at random, {PREVIEW_GROUPS} k-means "
               f"groups on a PCA map (ready in {time.perf_counter() - started:.1f} s).")
    st.plotly_chart(cluster_map(frame, sizes), key="clusters.preview")


def ask_for(handle: CorpusHandle, params: ClusterParams) -> None:
    """No stored result: show the running job, or a button that queues one."""
    job = cl.active_job(app, corpus.name, params)
    if job is not None:
        job_progress(app, job.id, "Computing clusters")
        first_view(handle)
        return
    last = st.session_state.get("clusters.last_job")
    if last:
        job_progress(app, last, "Last clusters job")
    st.info("No clusters for these settings yet (or the corpus changed since).",
            icon=":material/bubble_chart:")
    if st.button("Compute clusters", type="primary", icon=":material/play_arrow:",
                 key="clusters.compute"):
        _, job_id = cl.request_clusters(app, corpus.name, params)
        st.session_state["clusters.last_job"] = job_id
        st.rerun()
    first_view(handle)


def show(handle: CorpusHandle, result: cl.ClusterResult) -> None:
    n = result.size
    sizes = {c["id"]: c["size"] for c in result.clusters} | {-1: result.outliers}
    a, b, c = st.columns(3)
    a.metric("Documents", f"{n:,}")
    b.metric("Clusters", f"{len(result.clusters):,}")
    c.metric("Outliers", f"{result.outliers:,}", f"{result.outlier_share:.1%} of all",
             delta_color="off")
    used = ", ".join(f"{k} {v}" for k, v in result.params.items() if v is not None)
    st.caption(f"{used}; map: {result.projection.upper()}; computed in "
               f"{result.seconds.get('total', 0):.1f} s.")

    query = st.text_input("Show a search on the map", key="clusters.query",
                          placeholder="Its nearest documents are ringed on the map")
    hits = search(app, handle, query, k=SEARCH_HITS) if query.strip() else []
    frame = cl.map_frame(app, result, cl.MAP_MAX_POINTS, [h.doc_id for h in hits])
    if len(frame) < n:
        st.caption(f"Showing {len(frame):,} of {n:,} documents: the same share of every "
                   f"cluster (at least {cl.SAMPLE_FLOOR} each), so the browser stays smooth.")
    st.plotly_chart(cluster_map(frame, sizes), key="clusters.map")
    if hits:
        label = result.labels()
        where = cl.clusters_of(result, [h.doc_id for h in hits])
        st.dataframe([{"id": h.id, "score": round(h.score, 3),
                       "cluster": "not in this result" if c is None else label[c],
                       "text": h.text} for h, c in zip(hits, where, strict=True)],
                     hide_index=True, key="clusters.hits")

    left, right = st.columns([2, 3])
    with left:
        st.subheader("Clusters")
        st.plotly_chart(size_bars(result.clusters, result.outliers), key="clusters.sizes")
    with right:
        options = [c["id"] for c in result.clusters] + ([-1] if result.outliers else [])
        names = {c["id"]: f"{c['id']} · {c['label']} ({c['size']:,})" for c in result.clusters}
        names[-1] = f"outliers ({result.outliers:,})"
        chosen = st.selectbox("Open a cluster", options, format_func=names.get,
                              key="clusters.open")
        if chosen is not None and chosen >= 0:
            info = result.clusters[chosen]
            st.markdown(f"**Top terms:** {md_escape(', '.join(info['terms']))}  \n"
                        f"**Most central:** {md_escape(info['example_text'])}")
        if chosen is not None:
            members = cl.cluster_members(app, result, chosen)
            st.caption(f"{len(members):,} of {sizes[chosen]:,} documents, nearest the "
                       "cluster's centre first.")
            st.dataframe(members, hide_index=True, key="clusters.members")


params = settings()
with user_errors():
    opened = open_corpus(app, corpus.name)
    stored = cl.cached_clusters(app, opened, params)
    if stored is None:
        ask_for(opened, params)
    else:
        show(opened, stored)
