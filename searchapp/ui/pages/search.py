"""Search page: a query against one corpus, by meaning, by words or both, with filters.

The query is encoded and searched in the page (a few milliseconds once the model
is loaded); everything else comes from the database. The form and the result
cards live in ``searchapp.ui.search_controls``. While the corpus is still
being embedded, its progress shows in place of the search box, or above the
results when part of it can already be searched.
"""

from __future__ import annotations

import time

import streamlit as st

from searchapp.sample import ATTRIBUTION, SAMPLE_CORPUS
from searchapp.search.service import search
from searchapp.ui.common import (
    corpus_picker,
    corpus_summaries_or_stop,
    page_app,
    user_errors,
)
from searchapp.ui.search_controls import SCORE_NOTES, corpus_meta_columns, search_form, show_hits
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
def search_box_and_results(corpus_name: str, meta_columns: list[str]) -> None:
    """The form and its results: Enter reruns only this, not the page around it."""
    request = search_form(meta_columns)
    if problem := k_problem(request.k):
        st.error(problem, icon=":material/error:")
    elif request.submitted or request.query:
        with user_errors():
            started = time.perf_counter()
            with st.spinner("Searching (the first search also loads the model)..."):
                hits = search(app, corpus_name, request.query, k=int(request.k),
                              min_score=request.min_score, mode=request.mode,
                              where=request.conditions())
            elapsed_ms = (time.perf_counter() - started) * 1000
            if not hits and request.min_score is not None:
                st.info(f"No result scores {request.min_score:.2f} or more. Lower the minimum "
                        "score or try other words.", icon=":material/search_off:")
            elif not hits:
                st.info("No document matches these words (and filters). Try other words, or "
                        "search by meaning.", icon=":material/search_off:")
            else:
                st.caption(f"{len(hits)} results in {elapsed_ms:,.0f} ms. "
                           f"{SCORE_NOTES[request.mode]}")
            show_hits(hits, request.mode, app, corpus_name, request.query)


search_box_and_results(corpus.name, corpus_meta_columns(app, corpus.name))
