"""What the Search page can search while a corpus is being embedded, in one number.

While the embedding job runs, one bar says how many documents search covers
(the embedded count in the database, the same number the bar shows), at what
rate it grows and when it ends. Before the first batch it says when search
opens, and the page reruns by itself when it does.

Example (inside the Search page):
    >>> if not coverage_panel(app, corpus):              # doctest: +SKIP
    ...     st.stop()                                    # nothing to search yet
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.corpora import service as corpora
from searchapp.corpora.embed_batches import FIRST_BATCH
from searchapp.errors import InvalidParameterError
from searchapp.jobs import queue
from searchapp.jobs.horizon import split_message
from searchapp.reporting import md_escape
from searchapp.search.service import check_k
from searchapp.store import repo
from searchapp.ui.common import (
    POLL_SECONDS,
    active_embed_job,
    corpus_summaries,
    percent_done,
)


def coverage_panel(app: App, corpus: repo.CorpusSummary) -> bool:
    """Draw the coverage of a corpus that is not fully embedded; True when search can run.

    A fully embedded corpus draws nothing. While a job embeds it, the bar
    refreshes every second (only the bar: a fragment), and the whole page
    reruns when search opens or the job ends.
    """
    if corpus.documents and corpus.embedded >= corpus.documents:
        return True
    job = active_embed_job(app, corpus.name)
    if job is None:
        _no_job(app, corpus)
    else:
        st.fragment(_coverage_bar, run_every=POLL_SECONDS, key=f"coverage-{corpus.name}")(
            app, corpus.name, corpus.embedded)
    return corpus.embedded > 0


def coverage_text(embedded: int, documents: int, job: queue.JobView | None) -> str:
    """The bar's one line: what search covers now, and the job's rate and time left.

    Example:
        >>> coverage_text(512, 3025, None)
        'Search covers 512 of 3,025 documents (16%).'
    """
    if embedded == 0:
        text = (f"Search opens when the first {FIRST_BATCH:,} documents are embedded; "
                "this page opens it by itself.")
        step, _ = split_message(job.message if job else None)
        if step.startswith("Step 1"):
            text += f" Now: {step[len('Step 1 of 2: '):]}."
        return text
    share = percent_done(embedded, documents)
    text = f"Search covers {embedded:,} of {documents:,} documents ({share}%)."
    _, horizon = split_message(job.message if job else None)
    return f"{text} Embedding the rest: {horizon}." if horizon else text


def _coverage_bar(app: App, name: str, embedded_before: int) -> None:
    summary = next((c for c in corpus_summaries(app) if c.name == name), None)
    job = active_embed_job(app, name)
    if summary is None or job is None or (embedded_before == 0 and summary.embedded > 0):
        st.rerun()  # search opened, the job ended or the corpus went: redraw the page
    st.progress(summary.embedded / max(summary.documents, 1),
                text=md_escape(coverage_text(summary.embedded, summary.documents, job)))


def _no_job(app: App, corpus: repo.CorpusSummary) -> None:
    missing = corpus.documents - corpus.embedded
    st.warning(f"{missing:,} documents have no vector yet (their embedding job was cancelled "
               f"or failed; the Jobs page says why). Search covers {corpus.embedded:,} of "
               f"{corpus.documents:,} documents.", icon=":material/warning:")
    if st.button("Embed the remaining documents", icon=":material/play_arrow:"):
        corpora.request_embed(app, corpus.name)
        st.rerun()


def k_problem(k: float | None) -> str | None:
    """Why ``k`` cannot be used as the number of results, or None when it can.

    Example:
        >>> k_problem(0)
        'Results (k) must be a whole number from 1 to 1,000; got 0. No search was run.'
        >>> k_problem(10) is None
        True
    """
    try:
        check_k(k)
    except InvalidParameterError as exc:
        return f"{exc} No search was run."
    return None
