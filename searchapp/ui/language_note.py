"""The Search page's note under the corpus when the corpus' model does not read most of
its documents' language: the multilingual model proposed, with the command that switches
(``corpora.language_advice``).

The advice is one grouped SQL pass; it is kept per corpus, model and document count (an
ingest changes the count, a switch the model) for a few minutes, so a rerun reads nothing.

Example:
    >>> language_note(app, corpus)  # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.corpora.language_advice import advice
from searchapp.reporting import md_escape
from searchapp.store import repo

KEPT_SECONDS = 300


@st.cache_data(max_entries=256, ttl=KEPT_SECONDS, show_spinner=False)
def _advice(_app: App, corpus: str, model: str, documents: int) -> str | None:
    """``advice`` kept per (corpus, model, documents): the arguments after ``_app`` key it."""
    return advice(_app, corpus)


def language_note(app: App, corpus: repo.CorpusSummary) -> None:
    """A caption proposing the multilingual model, when the advice has one (else nothing)."""
    text = _advice(app, corpus.name, corpus.model_name, corpus.documents)
    if text:
        st.caption(f":material/translate: {md_escape(text)}")
