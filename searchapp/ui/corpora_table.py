"""The Upload page's table of corpora, and the embedding bar beside it, drawn from one read.

The table says how much of each corpus is embedded; the bar above it says how
far the embed job of the corpus just uploaded has come. Drawn by two fragments,
each refreshed every second on its own clock, they showed two moments: with
batches of 1,024 documents a bar at 25% beside a table at 38% (7,600 news items;
1,920 and 2,944 embedded). So while a bar is shown, one fragment reads the job
and the corpora at once, makes the two agree (``agreeing``) and draws both.

Example (inside the Upload page):
    >>> embedding_with_table(app, job_id, "faq", link_to_search)   # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pandas as pd
import streamlit as st

from searchapp.context import App
from searchapp.jobs import queue
from searchapp.store import repo
from searchapp.ui.common import (
    POLL_SECONDS,
    active_embed_job,
    corpus_summaries,
    job_status,
    md_escape,
    percent_done,
)


def agreeing(job: queue.JobView, rows: list[repo.CorpusSummary]
             ) -> tuple[queue.JobView, list[repo.CorpusSummary]]:
    """The embed job and the corpora as they must be shown side by side: the same counts.

    A running job that has counted (documents embedded of the corpus' documents,
    written after each batch) gives its corpus' row those counts; the database's
    count runs ahead of it between a batch's commit and the job's report. A job
    that has not counted yet (queued, loading its model) is shown with the
    corpus' own counts. A finished job, or one of a corpus not in ``rows``,
    changes nothing.

    Example:
        >>> rows = [repo.CorpusSummary("news", "m", 7600, 2944)]
        >>> job = queue.JobView(1, "embed", "running", {"corpus": "news"}, None, 1920, 7600,
        ...                     None, None, False, None, None, None, None, 1)
        >>> agreeing(job, rows)[1][0].embedded
        1920
    """
    corpus = job.payload.get("corpus")
    row = next((r for r in rows if r.name == corpus), None)
    if row is None or job.kind != "embed" or job.finished:
        return job, rows
    if job.status == "running" and job.progress_total > 0:
        counted = dataclasses.replace(row, documents=job.progress_total,
                                      embedded=job.progress_done)
        return job, [counted if r is row else r for r in rows]
    return dataclasses.replace(job, progress_done=row.embedded,
                               progress_total=row.documents), rows


def corpora_table(rows: list[repo.CorpusSummary]) -> None:
    """Every corpus with its documents and how many are embedded, in whole percent as the
    bars print it. A static table: it changes in the same instant as a bar drawn with it
    (a data grid redrew about 0.25 s after the bar above it)."""
    st.table(pd.DataFrame([{
        "corpus": md_escape(c.name), "documents": f"{c.documents:,}",
        "embedded": f"{c.embedded:,}", "embedded %": f"{percent_done(c.embedded, c.documents)}%",
        "model": md_escape(c.model_name)} for c in rows]), hide_index=True, border="horizontal")


def live_corpora_table(app: App) -> None:
    """The table alone (no bar on the page): refreshed every second while a corpus is
    being read or embedded (a job from the CLI, the API or another session), until every
    job ends."""
    embedding = _embedding(app, corpus_summaries(app))
    st.fragment(_live_table, run_every=POLL_SECONDS if embedding else None)(app, embedding)


def _live_table(app: App, was_embedding: bool) -> None:
    rows = corpus_summaries(app)
    if was_embedding and not _embedding(app, rows):
        st.rerun()  # every embedding ended: redraw the page once, then stop refreshing
    corpora_table(rows)


def _embedding(app: App, rows: list[repo.CorpusSummary]) -> bool:
    """Whether the table's counts are moving: a corpus being embedded, or files being read
    into one (an ingest stores and embeds batch by batch: a table drawn once stayed at 0
    documents while the ingest's bar said 64 embedded)."""
    return bool(queue.active(app.db, "ingest")) or any(
        active_embed_job(app, c.name) for c in rows if c.embedded < c.documents)


def embedding_with_table(app: App, job_id: int, corpus: str,
                         on_success: Callable[[], None] | None = None) -> None:
    """The bar of embed job ``job_id`` and, under it, the table of corpora: one fragment,
    refreshed every second until the job ends, both from one read (``agreeing``)."""
    job = queue.get(app.db, job_id)
    st.fragment(_bar_and_table, run_every=None if job.finished else POLL_SECONDS,
                key=f"embed-and-table-{job_id}")(app, job_id, corpus, job.finished, on_success)


def _bar_and_table(app: App, job_id: int, corpus: str, was_finished: bool,
                   on_success: Callable[[], None] | None) -> None:
    job = queue.get(app.db, job_id)
    if job.finished and not was_finished:
        st.rerun()  # the counts, the search link and the other pages' state change with it
    shown, rows = agreeing(job, corpus_summaries(app))
    bar = st.empty()  # the bar goes above the table but is sent after it: the table
    corpora_table(rows)  # takes the longer to prepare, so the two arrive together
    with bar.container():
        job_status(shown, f"Embedding {corpus!r}", on_success)
