"""An ingest job's report on a page: the files it did not read in a table whose reasons
wrap (never cut at the page's edge), and the notice a corpus' picker shows once per
session for the corpus' last ingest that left files out.

The report itself is read by ``intake.report`` (the job's stored result); the Upload
page, the Jobs page and the corpus picker draw it with ``problems_table``, so a file is
named with the same words everywhere. File names and reasons come from files: every
cell is escaped (``md_escape``) before ``st.table`` renders its Markdown.

Example (inside a page script):
    >>> problems_table(report.problems, job_id=12)              # doctest: +SKIP
    >>> failure_notice(app, "manuals")                          # doctest: +SKIP
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from streamlit.errors import StreamlitAPIException

from searchapp.context import App
from searchapp.intake.report import last_ingest, of_job, problem_line
from searchapp.reporting import md_escape, one_line

REPORT_LINES = 50  # files listed in a table; the rest are counted
NOTICE_LINES = 3  # files named in the notice
TOLD_KEY = "job-report.told"  # the ingest jobs whose left-out files this session was told
JOBS_PAGE = "searchapp/ui/pages/jobs.py"
KIND_WORDS = {"failed": "failed", "skipped": "not read", "unreadable": "cannot be read now",
              "stopped": "not looked at", "waiting": "still being written"}


def problem_rows(problems: list[dict]) -> pd.DataFrame:
    """The table's rows: file, what happened, why and what to do (escaped Markdown).

    Example:
        >>> problem_rows([{"path": "*a*.png", "reason": "is not a type we read",
        ...                "kind": "skipped"}]).iloc[0].tolist()
        ['\\\\*a\\\\*.png', 'not read', 'is not a type we read']
    """
    return pd.DataFrame([{"file": md_escape(p["path"]),
                          "what happened": KIND_WORDS.get(p["kind"], md_escape(p["kind"])),
                          "why, and what to do": md_escape(p["reason"])} for p in problems],
                        columns=["file", "what happened", "why, and what to do"])


def problems_table(problems: list[dict], job_id: int | None = None) -> None:
    """The files a job did not read, at most ``REPORT_LINES`` of them; the rest counted."""
    if not problems:
        return
    st.table(problem_rows(problems[:REPORT_LINES]), hide_index=True, border="horizontal")
    if len(problems) > REPORT_LINES and job_id is not None:
        st.caption(f"And {len(problems) - REPORT_LINES:,} more: `searchapp jobs show {job_id}`"
                   f" and the API's `GET /api/v1/jobs/{job_id}` list them all.")


def mark_told(job_id: int) -> None:
    """This session has seen the report of ``job_id``: its notice is not shown again."""
    st.session_state.setdefault(TOLD_KEY, set()).add(job_id)


def failure_notice(app: App, corpus: str) -> None:
    """Once per session per job: when the corpus' most recent finished ingest left files
    out, one warning with how many, the first few with their reasons, and the Jobs page."""
    job = last_ingest(app.db, corpus)
    if job is None or job.id in st.session_state.get(TOLD_KEY, set()):
        return
    report = of_job(job)
    left_out = report.left_out() if report else []
    mark_told(job.id)
    if not left_out:
        return
    count = len(left_out)
    shown = "; ".join(one_line(problem_line(p), 300).rstrip(".")
                      for p in left_out[:NOTICE_LINES])
    more = f"; and {count - NOTICE_LINES:,} more" if count > NOTICE_LINES else ""
    st.warning(md_escape(f"The last files added to {corpus!r} (job {job.id}) left "
                         f"{count:,} file{'s' if count != 1 else ''} out: {shown}{more}.") +
               " The Jobs page lists every file with why and what to do.",
               icon=":material/warning:")
    try:
        st.page_link(JOBS_PAGE, label=f"Jobs: job {job.id}", icon=":material/list:")
    except StreamlitAPIException:  # a page run on its own (AppTest): no navigation
        st.caption("The Jobs page: open it from the sidebar.")
