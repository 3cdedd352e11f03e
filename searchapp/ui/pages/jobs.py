"""Jobs page: recent background jobs with status, progress, errors and a cancel button;
an ingest job that left files out lists each with why and what to do (``job_report``).

The list refreshes itself every two seconds while a job is queued or running,
and stops refreshing once everything has ended. Where a Ray cluster is
configured (``SEARCHAPP_RAY_ADDRESS``), "Embed on Ray" queues the embedding of
a corpus' missing vectors on it (``corpora.request_ray_embed``, as the CLI's
``embed --engine ray``); the background worker is its driver. Where searches go to
shard servers (``SEARCHAPP_SEARCH_ENGINE=ray``), each corpus' shards are listed with
their size, freshness and node (``ui/shards_panel.py``).
"""

from __future__ import annotations

import time

import streamlit as st

from searchapp.context import App
from searchapp.corpora import service as corpora
from searchapp.errors import SearchAppError
from searchapp.intake.report import problems_of
from searchapp.jobs import queue
from searchapp.ui.common import (
    STATUS_COLORS,
    ago,
    corpus_summaries,
    duration,
    md_escape,
    page_app,
    progress_text,
    result_text,
)
from searchapp.ui.guide import guide_link
from searchapp.ui.job_report import mark_told, problems_table
from searchapp.ui.resources import ensure_background_worker
from searchapp.ui.shards_panel import shards_section

REFRESH_SECONDS = 2.0
FLASH_SECONDS = 8.0  # how long the outcome of a click stays above the list
TARGET_KEYS = ("corpus", "model", "name")  # payload fields worth showing as the job's target

app = page_app()
st.title("Jobs")
guide_link("how-it-works")
st.caption(f"Background worker: pid {md_escape(ensure_background_worker(app))}, log in "
           f"{md_escape(app.settings.data_dir / 'worker.log')}.")
limit = st.sidebar.number_input("Jobs shown", min_value=5, max_value=500, value=30, step=5)


def cancel(app: App, job_id: int) -> None:
    """Button callback: ask the job to stop; the outcome shows above the list."""
    try:
        job = queue.cancel(app.db, job_id)
        flash = ("success", f"Job {job_id} cancelled." if job.finished else
                 f"Job {job_id} will stop after its current step.")
    except SearchAppError as exc:
        flash = ("error", str(exc))
    st.session_state["jobs.flash"] = (*flash, time.monotonic())


def request_ray_embed(app: App, name: str) -> None:
    """Button callback: queue the corpus' missing vectors on the Ray cluster."""
    address = app.settings.ray_address
    try:
        job_id = corpora.request_ray_embed(app, name, address=address)
        shown = md_escape(repr(name))
        flash = ("success", f"Job {job_id} embeds {shown} on the Ray cluster at "
                 f"{md_escape(address or '')}." if job_id else
                 f"Every document of {shown} is embedded already.")
    except SearchAppError as exc:
        flash = ("error", str(exc))
    st.session_state["jobs.flash"] = (*flash, time.monotonic())


def ray_section(app: App) -> None:
    """Embed on Ray: only where a cluster is configured and some corpus lacks vectors."""
    if not app.settings.ray_address:
        return
    missing = [c.name for c in corpus_summaries(app) if c.embedded < c.documents]
    with st.expander(f"Embed on the Ray cluster ({md_escape(app.settings.ray_address)})"):
        if not missing:
            st.caption("Every corpus is embedded.")
            return
        name = st.selectbox("Corpus with documents still to embed", missing, key="jobs.ray")
        st.button("Embed on Ray", on_click=request_ray_embed, args=(app, name),
                  icon=":material/hub:")


def target(job: queue.JobView) -> str:
    return " · ".join(f"{k} {job.payload[k]!r}" for k in TARGET_KEYS if k in job.payload)


def left_out(job: queue.JobView) -> None:
    """An ingest job's files not read, each with why and what to do (a table that wraps)."""
    problems = problems_of(job)
    if problems:
        st.markdown(f"**{len(problems):,} file{'s' if len(problems) != 1 else ''} not read**")
        problems_table(problems, job.id)
        mark_told(job.id)


def job_row(app: App, job: queue.JobView) -> None:
    with st.container(border=True):
        head, status, button = st.columns([6, 2, 2], vertical_alignment="center")
        head.markdown(f"**Job {job.id}: {job.kind}** {md_escape(target(job))}")
        status.badge(job.status, color=STATUS_COLORS.get(job.status, "gray"))
        if not job.finished:
            button.button("Cancel", key=f"cancel-{job.id}", on_click=cancel,
                          args=(app, job.id), disabled=job.cancel_requested,
                          icon=":material/cancel:")
            st.progress(job.fraction, text=md_escape(progress_text(job)))
        elif job.status == "succeeded" and job.result:
            st.caption(md_escape(result_text(job, skip=TARGET_KEYS)))
            left_out(job)
        elif job.progress_total:
            st.caption(f"Stopped at {job.progress_done:,} of {job.progress_total:,}.")
        if job.error:
            st.error(md_escape(job.error), icon=":material/error:")
        times = [f"created {ago(job.created_at)}"]
        if job.started_at:
            times.append(f"ran {duration(job)}")
        st.caption(" · ".join(times))


def jobs_list(app: App, limit: int, was_active: bool) -> None:
    jobs = queue.recent(app.db, limit)
    active = any(not j.finished for j in jobs)
    if was_active and not active:
        st.rerun()  # everything ended: rerun the page so the list stops refreshing
    flash = st.session_state.get("jobs.flash")
    if flash and time.monotonic() - flash[2] < FLASH_SECONDS:
        getattr(st, flash[0])(flash[1])
    if not jobs:
        st.info("No jobs yet. Uploading a file on the Upload page starts an embedding job.",
                icon=":material/info:")
    for job in jobs:
        job_row(app, job)


ray_section(app)
shards_section(app)
active_now = any(not j.finished for j in queue.recent(app.db, int(limit)))
if not active_now:
    st.button("Refresh", icon=":material/refresh:")
st.fragment(jobs_list, run_every=REFRESH_SECONDS if active_now else None)(
    app, int(limit), active_now)
