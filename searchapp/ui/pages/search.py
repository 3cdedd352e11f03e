"""Search page: a query against one corpus, ranked by cosine similarity.

The query is encoded and searched in the page (a few milliseconds once the model
is loaded); everything else comes from the database. While the corpus is still
being embedded, its progress shows in place of the search box, or above the
results when part of it can already be searched.
"""

from __future__ import annotations

import time

import streamlit as st

from searchapp import corpora
from searchapp.sample import ATTRIBUTION, SAMPLE_CORPUS
from searchapp.search import MAX_K, search
from searchapp.ui.common import (
    active_embed_job,
    corpus_picker,
    corpus_summaries_or_stop,
    job_progress,
    md_escape,
    page_app,
    user_errors,
)

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

with st.form("search-form", border=False):
    query = st.text_input("Query", placeholder="Describe what you are looking for",
                          key="search-query")
    left, right = st.columns(2)
    k = left.number_input("Results (k)", min_value=1, max_value=MAX_K, value=10, step=1,
                          key="search-k")
    min_score = right.slider("Minimum score (cosine)", min_value=-1.0, max_value=1.0,
                             value=0.0, step=0.05, key="search-min-score",
                             help="Results scoring below this are left out.")
    submitted = st.form_submit_button("Search", type="primary", icon=":material/search:")

if submitted or query:
    with user_errors():
        started = time.perf_counter()
        with st.spinner("Searching (the first search also loads the model)..."):
            hits = search(app, corpus.name, query, k=int(k), min_score=float(min_score))
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
