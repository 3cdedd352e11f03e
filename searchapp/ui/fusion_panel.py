"""The Evaluate page's fusion panel: how hybrid search fuses its lists on this corpus, what a
fitted fusion gained, and a button that fits one to the corpus' judged queries.

The fit runs as a ``fit-fusion`` job (``searchapp.evaluation.fusion_fit``); the page only
queues it and follows it. Its outcome (kept or not, with the held-out nDCG@10 before →
after and its interval) is shown under the job's "done" line.
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.evaluation.fusion_fit import request_fusion_fit
from searchapp.jobs import queue
from searchapp.search.fusion import fusion_for, fusion_line, stored_entry
from searchapp.store import repo
from searchapp.ui.common import job_progress, md_escape
from searchapp.ui.resources import ensure_background_worker

JOBS = "evaluate.fusion_jobs"  # {corpus: job id} of this session's fusion fits


def fusion_section(app: App, corpus: str) -> None:
    """The fusion in use on ``corpus`` (its model), its gain, and the "Fit" button."""
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    fusion = fusion_for(app, state.id, state.model_name)
    entry = stored_entry(app, state.id, state.model_name) or {}
    line = fusion_line(fusion.as_dict(), entry.get("gain") if fusion.source == "fitted" else None)
    st.markdown(f"**Hybrid fusion** · {md_escape(line)}")
    if st.button("Fit the fusion to the judged queries", icon=":material/tune:",
                 key=f"evaluate.fit_fusion.{corpus}",
                 help="Tries semantic weights, RRF constants and depths on the judged "
                      "queries; the best is kept only when it is better on queries held out "
                      "of its fit (paired bootstrap)."):
        try:
            st.session_state.setdefault(JOBS, {})[corpus] = request_fusion_fit(app, corpus)
            ensure_background_worker(app)
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")
    job_id = st.session_state.get(JOBS, {}).get(corpus)
    if job_id is not None:
        job_progress(app, job_id, f"Fusion fit {job_id}",
                     on_success=lambda: _outcome(app, job_id))


def _outcome(app: App, job_id: int) -> None:
    result = queue.get(app.db, job_id).result or {}
    if result.get("sentence"):
        (st.success if result.get("kept") else st.info)(md_escape(result["sentence"]))
