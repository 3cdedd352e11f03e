"""Search page: a query against one corpus, ranked by cosine similarity.

The query is encoded and searched in the page (a few milliseconds once the model
is loaded); everything else comes from the database. While the corpus is still
being embedded, its progress shows in place of the search box, or above the
results when part of it can already be searched.
"""

from __future__ import annotations

import time

import streamlit as st

from searchapp.sample import ATTRIBUTION, SAMPLE_CORPUS
from searchapp.search import MAX_K, search
from searchapp.ui.common import (
    corpus_picker,
    corpus_summaries_or_stop,
    md_escape,
    page_app,
    user_errors,
)
from searchapp.ui.search_status import coverage_panel, k_problem

app = page_app()
st.title("Search")
summaries = corpus_summaries_or_stop(app)

corpus = corpus_picker(summaries)
st.caption(f"{corpus.documents:,} documents, embedded with {corpus.model_name}."
           if corpus.embedded >= corpus.documents else
           f"{corpus.documents:,} documents, being embedded with {corpus.model_name}.")
if corpus.name == SAMPLE_CORPUS:
    st.caption(ATTRIBUTION)

if not coverage_panel(app, corpus):
    st.stop()  # nothing embedded yet: the panel says when search opens


@st.fragment
def search_box_and_results(corpus_name: str) -> None:
    """The form and its results: Enter reruns only this, not the page around it."""
    with st.form("search-form", border=False):
        query = st.text_input("Query", placeholder="Describe what you are looking for",
                              key="search-query")
        left, right = st.columns(2)
        # No bounds on the widget: an out-of-range k gets a message and clears the results
        # (with bounds, the browser keeps the old value and the old results on screen).
        k = left.number_input("Results (k)", value=10, step=1, key="search-k",
                              help=f"How many results, 1 to {MAX_K:,}.")
        min_score = right.slider("Minimum score (cosine)", min_value=-1.0, max_value=1.0,
                                 value=0.0, step=0.05, key="search-min-score",
                                 help="Results scoring below this are left out.")
        submitted = st.form_submit_button("Search", type="primary", icon=":material/search:")

    if problem := k_problem(k):
        st.error(problem, icon=":material/error:")
    elif submitted or query:
        with user_errors():
            started = time.perf_counter()
            with st.spinner("Searching (the first search also loads the model)..."):
                hits = search(app, corpus_name, query, k=int(k), min_score=float(min_score))
            elapsed_ms = (time.perf_counter() - started) * 1000
            if not hits:
                st.info(f"No result scores {min_score:.2f} or more. Lower the minimum score or "
                        "try other words.", icon=":material/search_off:")
            else:
                st.caption(f"{len(hits)} results in {elapsed_ms:,.0f} ms. Score: cosine "
                           "similarity between the query and the text (1 = same meaning).")
            for rank, hit in enumerate(hits, start=1):
                with st.container(border=True, key=f"hit-{rank}"):
                    text_col, score_col = st.columns([10, 1], vertical_alignment="top")
                    text_col.markdown(f"**{rank}.** {md_escape(hit.text)}")
                    details = [f"id {md_escape(hit.id)}"] + [
                        f"{md_escape(str(key))}: {md_escape(str(value))}"
                        for key, value in hit.meta.items() if str(value).strip()]
                    text_col.caption(" · ".join(details))
                    score_col.badge(f"{hit.score:.3f}", color="blue")


search_box_and_results(corpus.name)
