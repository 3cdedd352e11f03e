"""The sidebar's jobs: what runs now (a small bar each, its rate and time left), and what
failed or left files unread lately, on every page, refreshed every few seconds.

It reads ``jobs.activity`` (the job rows themselves), and each bar's line is the one the
pages' own bars print (``common.progress_text``): the sidebar and a page never disagree,
and after a reload it is all there again.

Example (in app.py, once per run, after the navigation):
    >>> jobs_indicator(get_app())                                   # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.errors import JobError
from searchapp.jobs import queue
from searchapp.jobs.activity import Activity, activity, unread_files
from searchapp.jobs.kinds import kind
from searchapp.ui.common import md_escape, page_link, progress_text

REFRESH_SECONDS = 2.0
SHOWN = 3  # bars in the sidebar; the rest are counted
JOBS_PAGE = "searchapp/ui/pages/jobs.py"


def job_title(job: queue.JobView) -> str:
    """``Reading 'manuals'``: what a job does, to what.

    Example:
        >>> job = queue.JobView(4, "embed", "running", {"corpus": "faq"}, None, 1, 9, None,
        ...                     None, False, None, None, None, None)
        >>> job_title(job)
        "Embedding 'faq'"
    """
    target = job.payload.get("corpus") or job.payload.get("name") or job.payload.get("model")
    doing = _doing(job.kind)
    return f"{doing} {target!r}" if target else doing


def _doing(kind_name: str) -> str:
    """What a kind of job does, as its declaration says (a kind no longer declared: its name)."""
    try:
        return kind(kind_name).doing
    except JobError:
        return kind_name.capitalize()


def trouble_line(job: queue.JobView) -> str:
    """``Job 12 (Reading 'docs'): 3 files not read`` or ``... failed: why``."""
    title = f"Job {job.id} ({job_title(job)})"
    if job.status == "failed":
        return f"{title} failed: {job.error or job.message or 'no reason given'}"
    n = unread_files(job)
    return f"{title}: {n:,} file{'s' if n != 1 else ''} not read"


def jobs_indicator(app: App) -> None:
    """Draw the sidebar's jobs, refreshed every ``REFRESH_SECONDS`` (a fragment)."""
    with st.sidebar:
        st.fragment(_indicator, run_every=REFRESH_SECONDS)(app)


def _indicator(app: App) -> None:
    now = activity(app.db)
    with st.container(key="jobs-indicator"):
        _running(now)
        _troubled(now)
        if not now.quiet:
            page_link(JOBS_PAGE, "All jobs", icon=":material/pending_actions:")


def _running(now: Activity) -> None:
    if not now.running:
        st.caption("No job running.")
        return
    st.caption(f"**{len(now.running)} job{'s' if len(now.running) != 1 else ''} running or "
               "queued**")
    for job in now.running[:SHOWN]:
        st.progress(job.fraction, text=md_escape(f"{job_title(job)}: {progress_text(job)}"))
    if len(now.running) > SHOWN:
        st.caption(f"and {len(now.running) - SHOWN:,} more")


def _troubled(now: Activity) -> None:
    if not now.troubled:
        return
    lines = [trouble_line(job) for job in now.troubled[:SHOWN]]
    more = len(now.troubled) - SHOWN
    st.warning(md_escape("; ".join(lines)) + (f"; and {more:,} more" if more > 0 else "")
               + " (last 24 h).", icon=":material/error:")
