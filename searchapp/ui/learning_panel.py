"""The Models page's learning loop: learn from judgements, see the verdict, adopt, roll back.

Each section is a function the Models page calls, so its edits stay in one place:

- ``learn_section``: start a ``learn`` job (fine-tune from the corpus' judgements) or an
  ``adapt`` job (unsupervised SimCSE on its text);
- ``learning_jobs``: the latest such jobs, followed while they run, then the verdict
  (better / worse / not distinguishable, side by side with intervals), the threshold the
  new model would get, and "Use it" (the Models page never switches on its own);
- ``switch_section``: use any model for a corpus, follow the switch to its end (the page
  says when the corpus uses the new model, not "Re-embedding" forever), and roll back.
"""

from __future__ import annotations

import streamlit as st

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.evaluation.fusion_fit import KIND as FIT_FUSION
from searchapp.jobs import queue
from searchapp.training import adoption
from searchapp.training.adapt_job import ADAPT, request_adaptation
from searchapp.training.judged_items import corpus_items
from searchapp.training.learn_job import LEARN, request_learning
from searchapp.training.learning_plan import plan_for
from searchapp.training.names import check_new_model, suggested_name
from searchapp.ui.charts_evaluation import comparison_table
from searchapp.ui.common import duration, job_progress, md_escape, seed_corpus
from searchapp.ui.resources import ensure_background_worker

SWITCH_JOB = "models.switch_job"  # {corpus: job id} of the switch this session started
FOLLOW = "models.follow"  # a corpus whose switch was just asked for elsewhere on the page
VERDICT_ICONS = {"better": ":material/trending_up:", "worse": ":material/trending_down:",
                 "not distinguishable": ":material/drag_handle:",
                 "not measured": ":material/help:"}
ADAPT_NOTE = ("Unsupervised SimCSE on the corpus' own text. Whether it helps is measured, "
              "not assumed (benchmarks/learning_loop.py, docs/learning.md): judge some results and "
              "compare both models before switching.")


def learn_section(app: App, corpora: dict[str, str]) -> None:
    """Start learning from a corpus' judgements, or adapting to its text.

    The form starts where the user is: the corpus of the address (``?corpus=``) or the
    one used last, and a new model name that can be used (``{corpus}-v2``). The name is
    checked as it is typed, so the buttons are never the first to refuse it; judgements
    that cannot give a verdict are refused before any job is queued (``request_learning``).
    """
    st.header("Learn from a corpus' judgements")
    st.caption("Fine-tunes the corpus' current model on its judgements (Search, Duplicates and "
               "Label pages): relevant documents and duplicate pairs as positives with hard "
               "negatives, a fifth of the judgements held out. The job ends with both models "
               "measured on that fifth; the corpus switches only when you say so. With too few "
               "judgements to fine-tune, it fits hybrid search's fusion to them instead.")
    with st.container(border=True):
        left, mid, right = st.columns(3)
        seed_corpus("models.learn.corpus", list(corpora))
        corpus = left.selectbox("Corpus", list(corpora), key="models.learn.corpus",
                                format_func=lambda c: f"{c} (now {corpora[c]})")
        plan_notice(app, corpus)
        _seed_name(app, corpus)
        name = mid.text_input("New model name", key=LEARN_NAME,
                              help="Letters, digits, '.', '_' and '-'; not a model's name.")
        problem = name_problem(app, name.strip())
        if problem:
            mid.error(md_escape(problem), icon=":material/error:")
        augment = right.selectbox(
            "Augmented SBERT", ["auto", "on", "off"], key="models.learn.augment",
            help="A cross-encoder trained on the judgements labels more pairs for the model; "
                 "kept only if measurably better. auto: with fewer than 500 positive "
                 "judgements.")
        on_all = right.checkbox(
            "Then train on all judgements", key="models.learn.all",
            help="After the verdict, train the final model again on every judgement, the "
                 "held-out fifth included, with the same recipe. The verdict stays the one "
                 "measured before, on the model that never saw the held-out part.")
        learn = left.button("Learn from judgements", type="primary", icon=":material/school:",
                            disabled=problem is not None, key="models.learn.go")
        adapt = mid.button("Adapt to its text (no judgements)", help=ADAPT_NOTE,
                           icon=":material/auto_fix_high:", disabled=problem is not None,
                           key="models.adapt.go")
    if learn or adapt:
        _start(app, corpus, name.strip(), augment, learn, on_all)


LEARN_NAME = "models.learn.name"
NAME_FOR = "models.learn.name-for"  # (corpus, suggested name) the name box was given


def _seed_name(app: App, corpus: str) -> None:
    """Give the name box a usable name for ``corpus``: at first, and when the corpus
    changes while the box still holds the last suggestion (a typed name is kept)."""
    given = st.session_state.get(NAME_FOR)
    typed = st.session_state.get(LEARN_NAME)
    if given is not None and given[0] == corpus:
        return
    if typed is None or given is None or typed == given[1]:
        suggestion = suggested_name(app, corpus)
        st.session_state[LEARN_NAME] = suggestion
        st.session_state[NAME_FOR] = (corpus, suggestion)


def plan_notice(app: App, corpus: str) -> None:
    """What the corpus' judgements allow now and what more would buy (``learning_plan``)."""
    try:
        lines = plan_for(corpus_items(app, corpus)).lines()
    except SearchAppError as exc:
        st.error(md_escape(exc), icon=":material/error:")
        return
    st.info("\n".join(f"- {md_escape(line)}" for line in lines), icon=":material/school:")


def name_problem(app: App, name: str) -> str | None:
    """Why a new model cannot take ``name`` (None when it can)."""
    try:
        check_new_model(app, name)
    except SearchAppError as exc:
        return str(exc)
    return None


def _start(app: App, corpus: str, name: str, augment: str, learn: bool,
           on_all: bool = False) -> None:
    try:
        if learn:
            started = request_learning(app, corpus, name=name, augment=augment,
                                       train_on_all=on_all)
            kind = "Fusion fit" if started.route == "fusion" else "Learning"
            st.success(f"{kind} job {started.job_id}: {md_escape(started.describe())}")
        else:
            job_id = request_adaptation(app, corpus, name=name)
            st.success(f"Adaptation job {job_id} started for {md_escape(repr(name))}. {ADAPT_NOTE}")
        ensure_background_worker(app)
    except SearchAppError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")


def learning_jobs(app: App, limit: int = 3) -> None:
    """The latest learning and adaptation jobs: progress, then the verdict and "Use it"."""
    jobs = [j for j in queue.recent(app.db, 100) if j.kind in (LEARN, ADAPT, FIT_FUSION)][:limit]
    for job in jobs:
        if job.kind == FIT_FUSION:
            fusion_job(app, job)
            continue
        name, corpus = job.payload.get("name", "?"), job.payload.get("corpus", "?")
        with st.container(border=True):
            how = "from the judgements" if job.kind == LEARN else "adapted to the text"
            st.markdown(f"**Job {job.id}: {md_escape(name)}** ({how} of {md_escape(corpus)}, "
                        f"starting from {md_escape(job.payload.get('base'))})")
            if job.status != "succeeded":
                job_progress(app, job.id, f"{job.kind} job {job.id}")
                continue
            verdict_panel(app, job.result or {}, key=f"models.verdict.{job.id}")


def fusion_job(app: App, job) -> None:
    """A fusion fit (learning from few judgements): its progress, then what it measured."""
    corpus = job.payload.get("corpus", "?")
    with st.container(border=True):
        st.markdown(f"**Job {job.id}: hybrid fusion of {md_escape(corpus)}** (fitted to its "
                    f"judged queries, {md_escape(job.payload.get('model'))})")
        if job.status != "succeeded":
            job_progress(app, job.id, f"fit-fusion job {job.id}")
            return
        result = job.result or {}
        verdict = result.get("verdict") or "not measured"
        box = st.success if result.get("kept") else st.info
        box(md_escape(result.get("sentence") or verdict), icon=VERDICT_ICONS.get(verdict))


def verdict_panel(app: App, result: dict, key: str) -> None:
    """A finished job's verdict: the sentence, the side-by-side table, threshold, adopt."""
    verdict = result.get("verdict") or "not measured"
    box = st.success if verdict == "better" else st.warning if verdict == "worse" else st.info
    box(md_escape(result.get("sentence") or verdict), icon=VERDICT_ICONS.get(verdict))
    if result.get("comparison"):
        st.dataframe(comparison_table(result["comparison"]), hide_index=True, width="stretch")
    augmentation = result.get("augmentation") or {}
    if augmentation.get("tried"):
        st.caption(f"Augmented SBERT {'kept' if augmentation['kept'] else 'not kept'}: "
                   f"{md_escape(augmentation['reason'])}.")
    threshold = result.get("threshold")
    if threshold:
        pairs = threshold["expected_pairs"]
        how = ("the same precision on the held-out pairs" if threshold["method"] == "precision"
               else "the same number of pairs")
        st.caption(f"Duplicate threshold: {threshold['current']:.3f} now (about "
                   f"{pairs['current']:,} pairs); {md_escape(result['model'])} would find about "
                   f"{pairs['candidate_at_current']:,} at {threshold['current']:.3f}, so it gets "
                   f"{threshold['proposed']:.3f} ({how}: about "
                   f"{pairs['candidate_at_proposed']:,} pairs).")
    if not result.get("corpus"):
        return
    label = (f"Use {result['model']} for {result['corpus']}"
             if verdict in ("better", "not distinguishable")
             else f"Use {result['model']} anyway")
    if st.button(md_escape(label), key=key, type="primary" if verdict == "better" else "secondary",
                 icon=":material/swap_horiz:"):
        try:
            job_id = adoption.accept(app, result["corpus"], result["model"],
                                     force=verdict in ("worse", "not measured"))
            st.session_state.setdefault(SWITCH_JOB, {})[result["corpus"]] = job_id
            st.session_state[FOLLOW] = result["corpus"]  # the switch panel shows this corpus
            ensure_background_worker(app)
            st.rerun()
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")


def switch_section(app: App, corpora: dict[str, str], models: list[str]) -> None:
    """Use a model for a corpus; the switch followed to its end; back to the previous model."""
    follow = st.session_state.pop(FOLLOW, None)
    if follow in corpora:  # set before the widget exists, so it may still be changed
        st.session_state["models.corpus"] = follow
    left, right = st.columns(2)
    seed_corpus("models.corpus", list(corpora))  # its value only through session state
    corpus = left.selectbox("Corpus", list(corpora), key="models.corpus",
                            format_func=lambda c: f"{c} (now {corpora[c]})")
    target = right.selectbox("Model", models, key="models.target")
    if st.button(md_escape(f"Use {target} for {corpus}"), key="models.use",
                 icon=":material/swap_horiz:"):
        try:
            st.session_state.setdefault(SWITCH_JOB, {})[corpus] = adoption.switch(app, corpus,
                                                                                   target)
            ensure_background_worker(app)
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")
    follow_switch(app, corpus, corpora[corpus])
    previous = adoption.previous_model(app, corpus)
    idle = not queue.active_for(app.db, "embed", "corpus", corpus)
    if previous and idle and st.button(
            md_escape(f"Back to {previous}"), key="models.rollback", icon=":material/undo:",
            help=md_escape(f"{corpus} used {previous} before; its vectors are still stored.")):
        try:
            st.session_state.setdefault(SWITCH_JOB, {})[corpus] = adoption.rollback(app, corpus)
            ensure_background_worker(app)
            st.rerun()
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")


def follow_switch(app: App, corpus: str, current: str) -> None:
    """The corpus' switch job, from this session or any running one, followed to its end
    by the job's own bar ("done" once the corpus has switched: a message written at the
    click would still say "re-embedding" long after)."""
    active = queue.active_for(app.db, "embed", "corpus", corpus)
    job_id = active.id if active and active.payload.get("switch") else \
        st.session_state.get(SWITCH_JOB, {}).get(corpus)
    if job_id is None:
        return
    job = queue.get(app.db, job_id)
    target = job.payload.get("model", "the new model")
    label = f"Re-embedding {corpus!r} with {target!r} (job {job_id})"
    if job.status == "succeeded":
        st.success(f"{md_escape(label)}: done in {duration(job)}. "
                   f"{md_escape(repr(corpus))} now uses "
                   f"{md_escape(target)}: "
                   "searches, duplicates and clusters use its vectors.",
                   icon=":material/check_circle:")
        return
    if not job.finished:
        st.caption(md_escape(f"Searches of {corpus!r} use {current!r} until the new index is "
                             "complete."))
    job_progress(app, job_id, label)
