"""Clusters page: what a corpus is about, as a map of named clusters.

The page only asks: a stored result for (corpus, model, settings) is shown at
once; otherwise a button queues a ``clusters`` job and its progress shows until
the worker has stored the result. The map colours documents by cluster (hover:
shortened text and cluster label), a search can be drawn on it, and choosing a
cluster lists its documents, its three most central ones and its distinctive
terms, with a rename and a merge that are kept across recomputation
(``clusters.edits``), and keeps it as a search filter (``ui.cluster_filters``).
A slider zooms through the levels of the clusters' tree (broad themes to fine
ones) without recomputing. Above ``MAP_MAX_POINTS`` documents the map draws
an even sample of every cluster and says so. From ``PREVIEW_MIN_DOCUMENTS`` up,
a first view (k-means and PCA on a sample, in seconds) shows while the job runs.
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from searchapp import clusters as cl
from searchapp.base.bidi import isolate_rtl
from searchapp.clusters import ClusterParams
from searchapp.clusters.edits import apply_edits, load_edits, merge_clusters, rename_cluster
from searchapp.clusters.preview import PREVIEW_GROUPS, PREVIEW_MIN_DOCUMENTS, preview
from searchapp.corpora.csv_safe import safe_csv
from searchapp.search.service import search
from searchapp.ui.charts_clusters import cluster_map, density_image, size_bars, standalone_html
from searchapp.ui.cluster_filters import save_filter_form, saved_filters_list
from searchapp.ui.common import (
    corpus_picker,
    corpus_summaries_or_stop,
    csv_download,
    job_progress,
    md_escape,
    page_app,
    rtl_cells,
    user_errors,
)
from searchapp.ui.guide import guide_link
from searchapp.vectors.handle import CorpusHandle, open_corpus

SEARCH_HITS = 20
OUTLIER_HELP = {
    "auto": "The automatic method puts every document in its nearest cluster; choose HDBSCAN "
            "or communities to keep documents that fit nowhere apart.",
    "community": "Documents with too few close neighbours to belong to any community.",
    "hdbscan": "Documents HDBSCAN finds in no dense region (or far from their cluster).",
    "kmeans": "k-means puts every document in a cluster; those far less similar to their "
              "cluster's centre than is typical are counted apart, as outliers.",
}
METHOD_NAMES = {"auto": "Automatic (finds the number of groups)",
                "community": "Communities (similarity threshold)",
                "hdbscan": "HDBSCAN (density)", "kmeans": "k-means (fixed number)"}

app = page_app()
st.title("Clusters")
guide_link("clusters")
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
        elif method != "auto":
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
    st.plotly_chart(cluster_map(frame, sizes)[0], key="clusters.preview")


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


def zoomed(result: cl.ClusterResult) -> cl.ClusterResult:
    """The level the slider asks for (the method's own at first), with the person's edits."""
    counts = result.level_counts
    if len(counts) > 1:
        if st.session_state.get("clusters.level") not in counts:
            st.session_state["clusters.level"] = result.chosen_level if \
                result.chosen_level in counts else counts[len(counts) // 2]
        level = st.select_slider(
            "Clusters on the map: zoom from broad themes to fine ones", options=counts,
            key="clusters.level",
            help="Levels of one tree: a broad theme is the union of the finer clusters under "
                 "it. Switching recomputes nothing.")
        result = result.at_level(level)
    return apply_edits(result, load_edits(app, result))


def show(result: cl.ClusterResult) -> None:
    result = zoomed(result)
    n = result.size
    sizes = {c["id"]: c["size"] for c in result.clusters} | {-1: result.outliers}
    a, b, c = st.columns(3)
    a.metric("Documents", f"{n:,}")
    b.metric("Clusters", f"{len(result.clusters):,}")
    c.metric("Outliers", f"{result.outliers:,} ({result.outlier_share:.1%})",
             help=OUTLIER_HELP.get(result.params.get("method"), OUTLIER_HELP["community"]))
    used = ", ".join(f"{k} {v}" for k, v in result.params.items() if v is not None)
    if result.params.get("method") == "auto":
        used += f" (k chosen from the data; showing {len(result.clusters)} clusters)"
    st.caption(f"{used}; map: {result.projection.upper()}; computed in "
               f"{result.seconds.get('total', 0):.1f} s.")

    query = st.text_input("Show a search on the map", key="clusters.query",
                          placeholder="Its nearest documents are ringed on the map")
    hits = search(app, corpus.name, query, k=SEARCH_HITS) \
        if query.strip() else []
    asked = st.query_params.get_all("doc")  # "On the map" from a search result
    ringed = [h.doc_id for h in hits] + cl.find_documents(app, result, asked)
    frame = cl.map_frame(app, result, cl.MAP_MAX_POINTS, ringed)
    density = None
    if len(frame) < n:
        density = app.memo.get_or_make(result.corpus_id, result.generation,
                                       ("density", result.key),
                                       lambda: density_image(result.x, result.y, result.cluster))
        floor = min(cl.SAMPLE_FLOOR, cl.MAP_MAX_POINTS // (2 * (len(result.clusters) + 1)))
        st.caption(f"Showing {len(frame):,} of {n:,} documents as points: the same share of "
                   f"every cluster (at least {floor:,} each), so the browser stays "
                   f"smooth. The coloured shading behind them counts all {n:,}: each cell in "
                   "the colour of its commonest cluster, darker where more documents lie.")
    fig, trace_rows = cluster_map(frame, sizes, density=density)
    event = st.plotly_chart(fig, key="clusters.map", on_select="rerun",
                            selection_mode=("points", "box", "lasso"),
                            config={"scrollZoom": True, "displaylogo": False})
    st.caption("Click a point, or draw a box or a lasso (toolbar, top right), to list its "
               "documents; scroll to zoom, drag to pan, double-click to see everything again.")
    chosen = selected_rows(event, trace_rows)
    if len(chosen):
        doc_ids = frame.doc_id.to_numpy()[chosen]
        listing = cl.documents_frame(app, result, doc_ids)
        st.subheader(f"Selected on the map ({len(listing):,})")
        csv_download("Download the selection (CSV)", lambda: safe_csv(listing),
                     f"{corpus.name}-map-selection.csv", key="clusters.selection-csv")
        st.dataframe(rtl_cells(listing, ["label", "text"]), hide_index=True,
                     key="clusters.selection", width="stretch",
                     column_config={"text": st.column_config.TextColumn(width="large")})
    elif ringed:
        listing = cl.documents_frame(app, result, ringed)
        listing = rtl_cells(listing, ["label", "text"])
        st.dataframe(listing.assign(score=[round(h.score, 3) for h in hits] +
                                    [None] * (len(listing) - len(hits)))
                     if len(listing) >= len(hits) else listing,
                     hide_index=True, key="clusters.hits", width="stretch")
    exports(result, fig)

    left, right = st.columns([2, 3])
    with left:
        st.subheader("Clusters")
        st.plotly_chart(size_bars(result.clusters, result.outliers), key="clusters.sizes")
    with right:
        open_cluster(result, sizes)
    saved_filters_list(app, corpus.name)


def open_cluster(result: cl.ClusterResult, sizes: dict[int, int]) -> None:
    """One cluster: its terms, 3 central documents, members, CSV, rename and merge."""
    by_id = {c["id"]: c for c in result.clusters}
    options = list(by_id) + ([-1] if result.outliers else [])
    names = {i: f"{i} · {isolate_rtl(c['label'])} ({c['size']:,})" for i, c in by_id.items()}
    names[-1] = f"outliers ({result.outliers:,})"
    if st.session_state.get("clusters.open") not in options:
        st.session_state.pop("clusters.open", None)
    chosen = st.selectbox("Open a cluster", options, format_func=names.get, key="clusters.open")
    if chosen is None:
        return
    if chosen >= 0:
        info = by_id[chosen]
        central = "".join(f"\n{i}. {md_escape(cl.shorten(text, 200))} ({md_escape(ext)})"
                          for i, (ext, text) in enumerate(info.get("central", []), 1))
        merged = (f"  \n**Merged from:** {md_escape(' + '.join(info['merged']))}"
                  if info.get("merged") else "")
        st.markdown(f"**Distinctive terms:** {md_escape(', '.join(info['terms']))}{merged}  \n"
                    f"**Most central documents:**{central}")
    members = cl.cluster_members(app, result, chosen)
    st.caption(f"{len(members):,} of {sizes[chosen]:,} documents, nearest the "
               "cluster's centre first.")
    st.dataframe(rtl_cells(members, ["label", "text"]), hide_index=True, key="clusters.members")
    csv_download("This cluster (CSV)", lambda: safe_csv(cl.documents_frame(
        app, result, result.doc_ids[result.cluster == chosen])),
        f"{corpus.name}-cluster-{chosen}.csv", key="clusters.cluster-csv")
    if chosen >= 0:
        edit_cluster(result, chosen, by_id, names)
        save_filter_form(app, result, chosen, corpus.name)


def edit_cluster(result: cl.ClusterResult, chosen: int, by_id: dict, names: dict) -> None:
    """Rename the open cluster, or merge others into it; kept while the cluster survives."""
    with st.form("clusters.rename-form", border=False):
        name = st.text_input("Rename this cluster", value=by_id[chosen]["label"],
                             key=f"clusters.rename.{chosen}",
                             help="Kept when the clusters are computed again, on whichever "
                                  "cluster shares at least half its documents with this one.")
        if st.form_submit_button("Rename", icon=":material/edit:"):
            with user_errors("Nothing was renamed. "):
                rename_cluster(app, result, chosen, name)
                st.rerun()
    others = [i for i in by_id if i != chosen]
    with st.form("clusters.merge-form", border=False):
        into = st.multiselect("Merge with", others, format_func=names.get,
                              key=f"clusters.merge.{chosen}")
        if st.form_submit_button("Merge", icon=":material/merge:"):
            with user_errors("Nothing was merged. "):
                merge_clusters(app, result, [chosen, *into], by_id[chosen]["label"]
                               if by_id[chosen].get("renamed") else "")
                st.rerun()


def selected_rows(event, trace_rows) -> np.ndarray:
    """The frame rows a plotly selection picked (clicked, boxed or lassoed points)."""
    points = (event or {}).get("selection", {}).get("points", []) if event else []
    rows = []
    for point in points:
        curve = point.get("curve_number")
        index = point.get("point_index", point.get("point_number"))
        if curve is not None and index is not None and curve < len(trace_rows) \
                and index < len(trace_rows[curve]):
            rows.append(int(trace_rows[curve][index]))
    return np.unique(np.asarray(rows, dtype=np.int64))


def exports(result: cl.ClusterResult, fig) -> None:
    """Downloads: the map as one offline HTML file, the clusters, every document's place."""
    left, middle, right = st.columns(3)
    # Each file is built only when its button is clicked (a callable), not on every rerun.
    left.download_button("Map (HTML, opens offline)",
                         lambda: standalone_html(fig, f"{corpus.name}: clusters"),
                         file_name=f"{corpus.name}-map.html", mime="text/html",
                         icon=":material/map:", on_click="ignore", key="clusters.map-html")
    csv_download("Clusters (CSV)", lambda: safe_csv(cl.clusters_table(result)),
                 f"{corpus.name}-clusters.csv", where=middle, icon=":material/table:",
                 key="clusters.table-csv")
    csv_download("Every document's cluster and place (CSV)",
                 lambda: safe_csv(result.frame().drop(columns=["doc_id"])),
                 f"{corpus.name}-assignments.csv", where=right, key="clusters.assignments-csv")


def judgements_note(result: cl.ClusterResult, params: ClusterParams) -> None:
    """What the person's pair judgements did to these clusters, and a recompute when they
    changed since (a job already at it shows its progress instead)."""
    made = result.constraints
    if made.get("pairs"):
        unmet = f"; {made['unmet']:,} could not be met" if made.get("unmet") else ""
        pairs = f"{made['pairs']:,} judged pair{'s' if made['pairs'] != 1 else ''}"
        st.caption(f"{pairs} of documents acted as constraints: "
                   f"duplicates in one cluster, \"not duplicate\" pairs apart{unmet}.")
    if made.get("merges"):
        st.caption(f"{made['merges']:,} merge{'s' if made['merges'] != 1 else ''} you made "
                   "acted as constraints: each merge's documents were kept in one cluster.")
    if not cl.judgements_changed(app, result):
        return
    job = cl.active_job(app, corpus.name, params)
    if job is not None:
        job_progress(app, job.id, "Computing clusters with the new judgements")
        return
    st.warning("Pair judgements (Duplicates, Label) changed since these clusters were "
               "computed. They keep duplicates together and \"not duplicate\" pairs apart: "
               "compute again to apply them.", icon=":material/rule:")
    if st.button("Compute again with the judgements", icon=":material/refresh:",
                 key="clusters.apply-judgements"):
        _, job_id = cl.request_clusters(app, corpus.name, params, apply_judgements=True)
        st.session_state["clusters.last_job"] = job_id
        st.rerun()


params = settings()
with user_errors():
    stored = cl.stored_for_name(app, corpus.name, params)
    if stored is None:
        ask_for(open_corpus(app, corpus.name), params)
    else:
        judgements_note(stored, params)
        show(stored)
