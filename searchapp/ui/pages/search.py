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

from searchapp import corpora
from searchapp.sample import ATTRIBUTION, SAMPLE_CORPUS
from searchapp.search import search
from searchapp.ui.common import (
    active_embed_job,
    corpus_picker,
    corpus_summaries_or_stop,
    job_progress,
    page_app,
    user_errors,
)
from searchapp.ui.search_controls import SCORE_NOTES, corpus_meta_columns, search_form, show_hits

app = page_app()
st.title("Search")
summaries = corpus_summaries_or_stop(app)

corpus = corpus_picker(summaries)
st.caption(f"{corpus.documents:,} documents, {corpus.embedded:,} embedded with "
           f"{corpus.model_name}.")
if corpus.name == SAMPLE_CORPUS:
    st.caption(ATTRIBUTION)

if corpus.embedded < corpus.documents:
    job = active_embed_job(app, corpus.name)
    if job is not None:
        job_progress(app, job.id, f"Embedding {corpus.name!r}")
        if corpus.embedded:
            st.caption(f"Until it ends, results come from the {corpus.embedded:,} documents "
                       "embedded so far.")
    else:
        st.warning(f"{corpus.documents - corpus.embedded:,} documents have no vector yet "
                   "(their embedding job was cancelled or failed; the Jobs page says why).",
                   icon=":material/warning:")
        if st.button("Embed the remaining documents", icon=":material/play_arrow:"):
            corpora.embed(app, corpus.name)
            st.rerun()
    if corpus.embedded == 0:
        st.stop()

request = search_form(corpus_meta_columns(app, corpus.name))
if request.submitted or request.query:
    with user_errors():
        started = time.perf_counter()
        with st.spinner("Searching (the first search also loads the model)..."):
            hits = search(app, corpus.name, request.query, k=request.k,
                          min_score=request.min_score, mode=request.mode,
                          where=request.conditions())
        elapsed_ms = (time.perf_counter() - started) * 1000
        if not hits and request.min_score is not None:
            st.info(f"No result scores {request.min_score:.2f} or more. Lower the minimum score "
                    "or try other words.", icon=":material/search_off:")
        elif not hits:
            st.info("No document matches these words (and filters). Try other words, or "
                    "search by meaning.", icon=":material/search_off:")
        else:
            st.caption(f"{len(hits)} results in {elapsed_ms:,.0f} ms. {SCORE_NOTES[request.mode]}")
        show_hits(hits, request.mode)
