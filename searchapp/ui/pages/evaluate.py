"""Evaluate page: how good search and duplicate detection are on a corpus, per model, over time.

1. The corpus' judgements (counts) and the models to measure (its own by default).
2. "Evaluate": an ``evaluate`` job per model (the worker runs it; the page follows it),
   on the corpus' judgements or on uploaded BEIR/TREC files (queries.jsonl, qrels.tsv).
   The hybrid fusion in use and what a fitted one gained; a button fits it to the judged
   queries (``ui.fusion_panel``).
3. The latest result per model: nDCG@10, MRR@10, Recall@10/@100 per search mode and AP,
   best F1 and its threshold, each with its 95% bootstrap interval and n.
4. History: the primary metrics of every evaluation run over time, per model and per set
   measured on (the corpus' judgements, a learning job's held-out set, benchmark files:
   ``charts_evaluation.measured_on``), never one line across sets.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchapp.embedding.models import list_models
from searchapp.errors import SearchAppError
from searchapp.evaluation.service import request_evaluation
from searchapp.judgements.service import counts, evaluation_runs
from searchapp.search.fusion import fusion_line
from searchapp.ui.charts_evaluation import (
    history_figure,
    measured_on,
    pair_table,
    query_table,
)
from searchapp.ui.common import (
    corpus_picker,
    corpus_summaries_or_stop,
    job_progress,
    md_escape,
    page_app,
)
from searchapp.ui.fusion_panel import fusion_section
from searchapp.ui.guide import guide_link
from searchapp.ui.resources import ensure_background_worker

JOBS = "evaluate.jobs"  # {corpus: [job ids]} of this session's evaluations

app = page_app()
st.title("Evaluate")
guide_link("learning")
corpus = corpus_picker(corpus_summaries_or_stop(app))
judged = counts(app, corpus.name)
st.caption(f"{judged['relevant']:,} relevant and {judged['not_relevant']:,} not relevant "
           f"documents judged for {judged['queries']:,} queries; {judged['duplicate']:,} "
           f"duplicate and {judged['not_duplicate']:,} other pairs. Judge more on the Search, "
           "Duplicates and Label pages.")
fusion_section(app, corpus.name)

models = [m.name for m in list_models(app.settings) if not m.problem]
chosen = st.multiselect("Models", models, default=[corpus.model_name],
                        key=f"evaluate.models.{corpus.name}",
                        help="A model the corpus is not embedded with is encoded for the "
                             "evaluation only (nothing is stored).")
with st.expander("Benchmark files instead of the judgements (BEIR / TREC)"):
    queries_file = st.file_uploader("Queries (queries.jsonl: _id, text)", key="evaluate.queries")
    qrels_file = st.file_uploader("Judgements (qrels.tsv: query-id, corpus-id, score; or TREC "
                                  "qrels)", key="evaluate.qrels")
if st.button("Evaluate", type="primary", disabled=not chosen, icon=":material/analytics:"):
    try:
        files = {}
        if queries_file is not None or qrels_file is not None:
            if queries_file is None or qrels_file is None:
                raise SearchAppError("Upload both the queries and the qrels file, or neither "
                                     "to use the corpus' judgements.")
            files = {"queries": queries_file.getvalue(), "qrels": qrels_file.getvalue(),
                     "queries_filename": queries_file.name, "qrels_filename": qrels_file.name}
        ids = [request_evaluation(app, corpus.name, model=m, **files) for m in chosen]
        st.session_state.setdefault(JOBS, {})[corpus.name] = ids
        ensure_background_worker(app)
    except SearchAppError as exc:
        st.error(md_escape(exc), icon=":material/error:")

for job_id in st.session_state.get(JOBS, {}).get(corpus.name, []):
    job_progress(app, job_id, f"Evaluation job {job_id}")

runs = evaluation_runs(app, corpus.name)
if not runs:
    st.info("No evaluation of this corpus yet.", icon=":material/info:")
    st.stop()

st.header("Latest results")
latest = {}  # one per model and per set measured on (a learning job's held-out set apart)
for run in runs:
    latest[(run.model_name, measured_on(run.note))] = run
for (model, measured), run in latest.items():
    with st.container(border=True):
        st.markdown(f"**{md_escape(model)}** · on {md_escape(measured)} · "
                    f"{run.judgements:,} judgements · {run.created_at:%Y-%m-%d %H:%M}")
        table = query_table(run.metrics)
        if not table.empty:
            st.dataframe(table, hide_index=True, width="stretch")
        pairs = pair_table(run.metrics)
        if not pairs.empty:
            st.dataframe(pairs, hide_index=True, width="stretch")
        if run.metrics.get("fusion"):
            st.caption("Hybrid fusion: " + md_escape(fusion_line(run.metrics["fusion"],
                                                                 run.metrics.get("fusion_gain"))))
        if run.metrics.get("warning"):
            st.warning(md_escape(run.metrics["warning"]), icon=":material/warning:")
st.caption("Each metric ×100 (a threshold is a cosine) with its 95% bootstrap interval: the "
           "range in which it would fall 19 times in 20 for another set of judgements like "
           "these.")

st.header("History")
st.plotly_chart(history_figure([{"model": f"{r.model_name} on {measured_on(r.note)}",
                                 "created_at": r.created_at, "metrics": r.metrics}
                                for r in runs]), key="evaluate.history")
st.dataframe(pd.DataFrame([{"when": r.created_at, "model": r.model_name, "judgements": r.judgements,
                            "measured on": measured_on(r.note), "note": r.note}
                           for r in reversed(runs)]),
             hide_index=True, width="stretch")
