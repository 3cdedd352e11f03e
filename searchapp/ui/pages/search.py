"""Search page: a query against one corpus, by meaning, by words or both, with filters.

The query is encoded and searched in the page (a few milliseconds once the model
is loaded); everything else comes from the database. The box and the results
list live in ``searchapp.ui.search_view`` (one fragment, kept in step with the
address: ``?corpus=...&q=...``). While the corpus is still being embedded, its
progress shows in place of the search box, or above the results when part of
it can already be searched.
"""

from __future__ import annotations

import streamlit as st

from searchapp.reporting import md_escape
from searchapp.sample import ATTRIBUTION, SAMPLE_CORPUS
from searchapp.ui import suggestions
from searchapp.ui.common import (
    compact_top,
    corpus_picker,
    corpus_summaries_or_stop,
    page_app,
)
from searchapp.ui.guide import guide_link
from searchapp.ui.language_note import language_note
from searchapp.ui.saved_sidebar import saved_news, saved_sidebar
from searchapp.ui.search_controls import corpus_meta_columns
from searchapp.ui.search_status import coverage_panel
from searchapp.ui.search_view import search_section

app = page_app()
# The controls stay on a few rows so the first screen shows results (1400×1000: the hits
# started at 690 px, 2 in view, none with the filters open): title and guide link on one
# row, the corpus and what it holds on one, the form on two (search_controls).
title, guide = st.columns([4, 1], vertical_alignment="bottom")
title.title("Search")
with guide:
    guide_link("search")
summaries = corpus_summaries_or_stop(app)

picker, about = st.columns([3, 2], vertical_alignment="bottom")
with picker:
    corpus = corpus_picker(summaries)
about.caption(f"{corpus.documents:,} documents, embedded with {md_escape(corpus.model_name)}."
              if corpus.embedded >= corpus.documents else
              f"{corpus.documents:,} documents, being embedded with "
              f"{md_escape(corpus.model_name)}.")
if corpus.name == SAMPLE_CORPUS:
    st.caption(ATTRIBUTION)
language_note(app, corpus)  # mostly not in a language its model reads: the switch proposed

if not coverage_panel(app, corpus):
    st.stop()  # nothing embedded yet: the panel says when search opens

saved_sidebar(app, corpus.name)  # the corpus' saved searches, each with its "N new"
saved_news(app, corpus.name)  # opened from there: its new hits first, marked new
search_section(app, corpus.name, corpus_meta_columns(app, corpus.name))
suggestions.attach(corpus.name)  # completions under the box as one types
compact_top()  # last: the style is not the page's first element (tests read the hits first)
