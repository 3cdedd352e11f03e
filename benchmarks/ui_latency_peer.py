"""The peer of benchmarks/ui_latency.py: the least Streamlit page that does the same search.

One text input, the same ``searchapp.search.service.search`` call on the same data, the
results as plain markdown: what a search costs in this framework with nothing
else on the page. ``ui_latency.py`` starts it with ``streamlit run`` beside the app.
"""

import os
import time

import streamlit as st

from searchapp.search.service import search
from searchapp.ui.resources import get_app

corpus = os.environ["UI_LATENCY_CORPUS"]
with st.form("peer"):  # as in the app: Enter submits, typing alone does not rerun
    query = st.text_input("Query")
    st.form_submit_button("Search")
if query:
    started = time.perf_counter()
    hits = search(get_app(), corpus, query, k=10)
    st.caption(f"{len(hits)} results in {(time.perf_counter() - started) * 1000:,.0f} ms")
    for rank, hit in enumerate(hits, start=1):
        with st.container(key=f"hit-{rank}"):
            st.markdown(f"**{rank}.** {hit.text}")
