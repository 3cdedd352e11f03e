"""Models page: the models with their metrics, fine-tuning on uploaded pairs, switching a corpus.

1. The registry: bundled and fine-tuned models, with dev metrics before and after.
2. Fine-tune: upload labelled pairs, see the detected objective and a preview,
   set the hyper-parameters, start a ``finetune`` job (the worker trains).
3. Training: the latest fine-tuning jobs, with a live chart of the loss and the
   dev metric while one runs (refreshed every two seconds).
4. Use a model for a corpus: an ``embed`` job that re-embeds the corpus and
   switches it over once complete (the old index serves until then), followed to
   its end, with the way back; learning from a corpus' judgements and the verdict
   of each learning job (``searchapp.ui.learning_panel``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchapp.embedding.models import list_models
from searchapp.errors import SearchAppError
from searchapp.intake.ingest import read_table
from searchapp.jobs import queue
from searchapp.training.data import AUTO_REASONS, ROLES, load_training_data
from searchapp.training.losses import OBJECTIVES
from searchapp.training.task import request_finetune, training_history
from searchapp.ui.charts_models import training_figure
from searchapp.ui.common import md_escape, page_app
from searchapp.ui.guide import guide_link
from searchapp.ui.learning_panel import learn_section, learning_jobs, switch_section
from searchapp.ui.resources import ensure_background_worker

REFRESH_SECONDS = 2.0
AUTO = "(auto)"

app = page_app()
st.title("Models")
guide_link("learning")
flash = st.session_state.pop("models.flash", None)
if flash:
    getattr(st, flash[0])(flash[1])

# ---- 1. the registry ---------------------------------------------------------------
models = list_models(app.settings)
rows = []
for m in models:
    metrics = m.card.get("metrics", {})
    before, after = metrics.get("before", {}), metrics.get("after", {})
    rows.append({"name": m.name, "source": m.source, "base": m.card.get("base_model", ""),
                 "objective": m.card.get("objective", ""),
                 "dev before": ", ".join(f"{k} {v}" for k, v in before.items()),
                 "dev after": ", ".join(f"{k} {v}" for k, v in after.items())})
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")

# ---- 2. fine-tune ------------------------------------------------------------------
st.header("Fine-tune on your pairs")
st.caption("Columns sentence1, sentence2, score → regression; premise, hypothesis, label "
           "(entailment/neutral/contradiction) → classification; sentence1, sentence2, label "
           "(0/1) → duplicates; anchor, positive, negative → triplets; two text columns only "
           "→ positive pairs (in-batch negatives).")
# Any file is accepted: a wrong type gets our message naming the formats we read.
train_file = st.file_uploader("Training pairs", key="models.train")
dev_file = st.file_uploader("Dev pairs (optional: 10% of the training file is held out "
                            "otherwise)", key="models.dev")
objective = st.selectbox("Objective", ["auto", *OBJECTIVES], key="models.objective",
                         help="auto picks it from the columns; for scores it picks cosent, "
                              "which did best in our measurements.")
columns: dict[str, str] = {}
data = None
if train_file is not None:
    raw, filename = train_file.getvalue(), train_file.name
    try:
        file_columns = list(read_table(raw, filename).columns)
        with st.expander("Map columns (when the names differ)"):
            picks = st.columns(4)
            for i, role in enumerate(ROLES):
                choice = picks[i % 4].selectbox(role, [AUTO, *file_columns],
                                                key=f"models.col.{role}")
                if choice != AUTO:
                    columns[role] = choice
        batch_size = int(st.session_state.get("models.batch", 16))
        data = load_training_data(raw, filename, objective=objective, columns=columns or None,
                                  batch_size=batch_size)
        st.success(f"Detected: {md_escape(data.describe())}.")
        if objective == "auto":
            st.caption(f"Why {data.objective}: {AUTO_REASONS[data.kind]}")
        st.dataframe(data.preview(5), hide_index=True, width="stretch")
    except SearchAppError as exc:
        st.error(md_escape(exc))

with st.form("models.start", border=True):
    left, mid, right = st.columns(3)
    name = left.text_input("New model name", key="models.name", placeholder="support-v1")
    base = mid.selectbox("Start from", [m.name for m in models], key="models.base")
    epochs = right.number_input("Epochs", 1, 100, 1, key="models.epochs",
                                help="The paper trains 1 epoch on NLI, 4 on STS-sized data.")
    batch = left.number_input("Batch size", 2, 1024, 16, key="models.batch")
    lr = mid.number_input("Learning rate", 1e-7, 1e-2, 2e-5, format="%.1e", key="models.lr")
    evals = right.number_input("Dev evaluations per epoch", 1, 20, 1, key="models.evals")
    average = left.checkbox("Average the weights", key="models.average",
                            help="Evaluates and keeps a moving average of the recent weights "
                                 "(decay 0.995) instead of the last ones: steadier dev scores.")
    start = st.form_submit_button("Start fine-tuning", type="primary",
                                  disabled=data is None, icon=":material/model_training:")
if start and data is not None:
    try:
        started = request_finetune(
            app, train_file.getvalue(), train_filename=train_file.name, name=name.strip(),
            dev=dev_file.getvalue() if dev_file else None,
            dev_filename=dev_file.name if dev_file else None, objective=objective,
            base=base, columns=columns or None, epochs=int(epochs), batch_size=int(batch),
            lr=float(lr), evals_per_epoch=int(evals), average_decay=0.995 if average else 0.0)
        ensure_background_worker(app)
        st.session_state["models.flash"] = (
            "success", f"Fine-tuning job {started.job_id} started for {name.strip()!r}.")
        st.rerun()
    except SearchAppError as exc:
        st.error(md_escape(exc))

# ---- 3. training jobs ------------------------------------------------------------------
jobs = [j for j in queue.recent(app.db, 50) if j.kind == "finetune"][:3]
running = any(not j.finished for j in jobs)


@st.fragment(run_every=REFRESH_SECONDS if running else None)
def training_panel() -> None:
    """The latest fine-tuning jobs: progress, live chart, metrics before and after."""
    for old in jobs:
        job = queue.get(app.db, old.id)
        model_name = job.payload.get("name", "?")
        with st.container(border=True):
            st.markdown(f"**Job {job.id}: {md_escape(model_name)}** "
                        + md_escape(f"({job.payload.get('objective')}, from "
                                    f"{job.payload.get('base')}) · {job.status}"))
            if not job.finished:
                st.progress(job.fraction, text=md_escape(job.message or "waiting for the worker"))
            if job.error:
                st.error(md_escape(job.error))
            history = training_history(app, model_name)
            if history and history.get("entries"):
                st.plotly_chart(training_figure(history), key=f"models.chart.{job.id}")
            metrics = (job.result or {}).get("metrics")
            if metrics:
                table = pd.DataFrame({"before": metrics["before"], "after": metrics["after"]})
                st.dataframe(table.T, width="content")


if jobs:
    st.header("Training")
    training_panel()

# ---- 4. use a model for a corpus -----------------------------------------------------
st.header("Use a model for a corpus")
try:
    from searchapp.store import repo

    with app.db.session() as s:
        corpora = {c.name: c.model_name for c in repo.summaries(s)}
except SearchAppError as exc:  # pragma: no cover - a broken database shows elsewhere too
    st.error(md_escape(exc))
    corpora = {}
if not corpora:
    st.info("No corpus yet: add one on the Upload page.")
else:
    switch_section(app, corpora, [m.name for m in models])
    learn_section(app, corpora)
    learning_jobs(app)
