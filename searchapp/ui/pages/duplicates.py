"""Duplicates page: the duplicate pairs and groups of a corpus, the review queue, a check for a
new document, and the threshold (calibrated on the corpus' judgements or on labelled pairs).

Each pair and each match of a new document can be judged in its table; the
Review tab asks about the pairs nearest the threshold first, by keyboard, and
confirms groups with their canonical document (``searchapp.ui.duplicates_review``).

Mining and calibration run as worker jobs; the page enqueues them and polls.
A stored mining result is filtered here for any threshold at or above the one it
was mined at, so moving the slider up needs no job. Checking one document is an
encoder pass and an index query, fast enough to run in the page.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchapp import duplicates as dup
from searchapp.base.bidi import isolate_rtl
from searchapp.duplicates import calibration as cal
from searchapp.duplicates.export import groups_csv, pairs_csv
from searchapp.errors import SearchAppError
from searchapp.jobs import queue
from searchapp.pairs.threshold import stored_calibration, threshold_for
from searchapp.store import repo
from searchapp.ui.charts_duplicates import precision_recall_figure, score_histogram
from searchapp.ui.common import (
    corpus_picker,
    csv_download,
    job_progress,
    md_escape,
    page_app,
    rtl_cells,
    two_cosines,
)
from searchapp.ui.duplicates_review import (
    confirm_group,
    confirmed_groups_section,
    judged_calibration,
    review_tab,
    share_warning,
)
from searchapp.ui.guide import guide_link
from searchapp.ui.judging import match_marks_table, pair_marks_table
from searchapp.ui.resources import ensure_background_worker

SHOWN_PAIRS = 500  # rows in the pairs table (the CSV has them all)
GROUPS_PER_PAGE = 20
CAL_JOB = "dup-calibrate-job"
CHECKED = "dup-checked"
LAST_REPORT = "dup-last-report"  # corpus -> the report last shown, kept while a new one mines


def last_job(kind: str, corpus: str) -> queue.JobView | None:
    return next((j for j in queue.recent(app.db, 50)
                 if j.kind == kind and j.payload.get("corpus") == corpus), None)


def show_pairs_and_groups(report: dup.DuplicateReport, calibrated: float | None) -> None:
    cols = st.columns(4)
    cols[0].metric("Pairs", f"{report.pair_count:,}")
    cols[1].metric("Exact duplicates", f"{report.exact_count:,}")
    cols[2].metric("Groups", f"{report.group_count:,}")
    cols[3].metric("Documents", f"{report.documents:,}")
    how = "stored result" if report.reused else "just mined"
    st.caption(f"k = {report.k} nearest neighbours per document, {md_escape(report.method)} "
               "search, "
               f"{how} (mining took {report.seconds:.2f} s).")
    if not report.pair_count:
        st.info("No pair reaches this threshold. Lower it to see weaker candidates.")
        return
    pairs = dup.pairs_frame(report, SHOWN_PAIRS)
    left, right = st.columns(2)
    # The full tables are built only when a button is clicked (on Streamlit's thread).
    csv_download("Download pairs (CSV)", lambda: pairs_csv(report),
                 f"{report.corpus}-duplicate-pairs.csv", where=left)
    csv_download("Download groups (CSV)", lambda: groups_csv(report),
                 f"{report.corpus}-duplicate-groups.csv", where=right)
    st.plotly_chart(score_histogram(report.pair_scores, report.threshold, calibrated),
                    width="stretch")
    st.subheader("Pairs")
    if report.pair_count > SHOWN_PAIRS:
        st.caption(f"The {SHOWN_PAIRS} best of {report.pair_count:,}; the CSV has them all. "
                   "The Review tab brings the pairs that need a person first.")
    pair_marks_table(
        app, report.corpus,
        rtl_cells(pairs[["score", "exact", "a_text", "b_text", "a", "b"]], ["a_text", "b_text"]),
        key="dup-pairs-marks",
        column_config={
            "score": st.column_config.NumberColumn("Score", format="%.3f"),
            "exact": st.column_config.CheckboxColumn("Exact", help="same normalised text"),
            "a_text": st.column_config.TextColumn("Document A", width="large"),
            "b_text": st.column_config.TextColumn("Document B", width="large"),
            "a": "id A", "b": "id B"})
    show_groups(report)


def show_groups(report: dup.DuplicateReport) -> None:
    """The groups, a page of GROUPS_PER_PAGE at a time, and the members of the chosen one."""
    st.subheader(f"Groups ({report.group_count:,})")
    st.caption("Each group keeps only members within the threshold of its representative "
               "(the member closest to all the others), so a chain of near-duplicates "
               "cannot pull in unrelated documents. Biggest groups first.")
    if not report.group_count:
        return
    pages = -(-report.group_count // GROUPS_PER_PAGE)
    page = 1
    if pages > 1:
        page = int(st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages,
                                   value=1, step=1, key="dup-groups-page"))
    start = (page - 1) * GROUPS_PER_PAGE
    groups = report.top_groups(GROUPS_PER_PAGE, start=start)
    st.dataframe(
        [{"group": start + n, "size": g.size, "representative": isolate_rtl(g.texts[0]),
          "closest member": g.scores[1] if g.size > 1 else None}
         for n, g in enumerate(groups, start=1)],
        hide_index=True, width="stretch", key="dup-groups-table",
        column_config={"representative": st.column_config.TextColumn(width="large"),
                       "closest member": st.column_config.NumberColumn(format="%.3f")})
    numbers = list(range(start + 1, start + len(groups) + 1))
    chosen = st.selectbox("Open a group", numbers, key="dup-group-open",
                          format_func=lambda n: f"{n} · {groups[n - start - 1].size} · "
                          f"{isolate_rtl(groups[n - start - 1].texts[0][:90])}")
    group = groups[chosen - start - 1]
    st.dataframe({"member": group.members, "cosine to representative": group.scores,
                  "text": [isolate_rtl(t) for t in group.texts]}, hide_index=True, width="stretch",
                 key="dup-group-members",
                 column_config={"cosine to representative": st.column_config.NumberColumn(
                     format="%.3f"), "text": st.column_config.TextColumn(width="large")})
    confirm_group(app, report.corpus, group, key=f"dup-confirm-{chosen}")


def pairs_tab(corpus: str, threshold: float, k: int, calibrated: float | None) -> None:
    """The report at (threshold, k); when it needs mining, a job, started by itself when the
    corpus was mined before, with the previous report shown until the new one arrives."""
    try:
        report = dup.find_duplicates(app, corpus, threshold, k, compute=False)
    except SearchAppError as exc:
        st.error(md_escape(exc), icon=":material/error:")
        return
    shown = st.session_state.setdefault(LAST_REPORT, {})
    if report is not None:
        shown[corpus] = report
        show_pairs_and_groups(report, calibrated)
        return
    job = queue.active_for(app.db, dup.KIND, "corpus", corpus)
    last = last_job(dup.KIND, corpus)
    failed = last is not None and last.status == "failed"
    if job is None and not failed and (corpus in shown or dup.mined_before(app, corpus)):
        job = start_mining(corpus, threshold, k)  # a changed threshold or k: mine by itself
    if job is not None:
        job_progress(app, job.id, f"Finding duplicates in {corpus!r} at {threshold:.3f}, "
                                  f"k = {k}")
        previous = shown.get(corpus)
        if previous is not None:
            st.caption(f"Until they arrive, the results at threshold {previous.threshold:.3f}"
                       f", k = {previous.k}:")
            show_pairs_and_groups(previous, calibrated)
        return
    if failed:
        st.error(f"The last run failed, so it is not started again by itself: "
                 f"{md_escape(last.error or '')}", icon=":material/error:")
    else:
        st.info(f"{md_escape(repr(corpus))} has not been mined yet. Mining runs in the "
                "background; results are kept until the corpus changes, and a new threshold or k "
                "mines again by itself.")
    if st.button("Find duplicates", type="primary", icon=":material/content_copy:") and \
            start_mining(corpus, threshold, k) is not None:
        st.rerun()


def start_mining(corpus: str, threshold: float, k: int) -> queue.JobView | None:
    """Queue the mining job (or find the same one queued); None after showing why not."""
    try:
        job_id = dup.request_mining(app, corpus, threshold, k)
        ensure_background_worker(app)
    except SearchAppError as exc:
        st.error(md_escape(exc), icon=":material/error:")
        return None
    return queue.get(app.db, job_id)


def check_tab(corpus: str, threshold: float) -> None:
    question = st.text_area("New document", key="dup-question",
                            placeholder="Paste a text to see whether the corpus has it already")
    if st.button("Check", icon=":material/search:"):
        try:
            report = dup.check_report(app, corpus, question, threshold)
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")
            return
        st.session_state[CHECKED] = (corpus, question, threshold, report)
    checked = st.session_state.get(CHECKED)
    if not checked or checked[:3] != (corpus, question, threshold):
        return
    report = checked[3]
    scores = {"score": st.column_config.NumberColumn("cosine", format="%.3f"),
              "text": st.column_config.TextColumn(width="large")}
    if report.matches:
        st.warning(f"{len(report.matches)} likely duplicate(s) at cosine ≥ {threshold:.3f}.",
                   icon=":material/content_copy:")
        match_marks_table(app, corpus, question,
                          pd.DataFrame([m.as_dict() | {"exact": m.exact}
                                        for m in report.matches]),
                          key="dup-check-marks", column_config=scores)
    else:
        st.success(f"No document in {md_escape(repr(corpus))} reaches cosine {threshold:.3f}: "
                   "it looks new.",
                   icon=":material/check_circle:")
    if report.near_misses:
        best, limit = two_cosines(report.near_misses[0].score, threshold)
        st.markdown(f"**Closest below the threshold** (the nearest at cosine {best}, the "
                    f"threshold {limit}): judge them if one is the same question.")
        match_marks_table(app, corpus, question,
                          pd.DataFrame([m.as_dict() for m in report.near_misses]),
                          key="dup-check-near", column_config=scores)
    if st.button("Add it to the corpus", icon=":material/add:"):
        try:
            summary = dup.add_question(app, corpus, question)
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")
            return
        if summary.job_id is not None:
            ensure_background_worker(app)
            st.success(f"Added; embedding job {summary.job_id} is queued.")
        else:
            st.info("That exact text is already stored.")


def calibrate_tab(corpus: str, model: str, threshold: float, stored: dict | None) -> None:
    judged = judged_calibration(app, corpus, model, threshold)
    st.subheader("On a file of labelled pairs")
    if stored:
        st.markdown(f"**Calibrated threshold of {md_escape(model)}: {stored['threshold']:.3f}** "
                    f"(best F1 {stored['f1']:.1f}, AP {stored['ap']:.1f}, "
                    f"{stored['pairs']:,} pairs from "
                    f"{md_escape(stored.get('source') or 'a file')}).")
        st.plotly_chart(precision_recall_figure(stored["curve"], stored["threshold"], threshold),
                        width="stretch", key="stored-curve")
    st.caption("Upload labelled pairs (columns sentence1, sentence2, label 0/1; CSV, TSV or "
               "JSONL, optionally .gz) to measure average precision and the precision-recall "
               "curve, and find the threshold with the best F1 for this model.")
    upload = st.file_uploader("Labelled pairs")  # a wrong type gets our message, with formats
    if upload is not None and st.button("Compute AP and threshold", icon=":material/tune:"):
        try:  # a bad file fails here, not in the job
            job_id, _ = cal.request_calibration(app, model, upload.getvalue(), upload.name)
        except SearchAppError as exc:
            st.error(md_escape(exc), icon=":material/error:")
            return
        ensure_background_worker(app)
        st.session_state[CAL_JOB] = job_id
    job_id = st.session_state.get(CAL_JOB)
    if job_id is None:
        return
    job = queue.get(app.db, job_id)
    if not job.finished:
        job_progress(app, job_id, "Scoring the labelled pairs")
    elif job.status != "succeeded":
        st.error(f"Calibration {job.status}: {md_escape(job.error or '')}",
                 icon=":material/error:")
    else:
        result = cal.Calibration(**job.result)
        st.markdown(f"On **{result.pairs:,} pairs** ({result.positives:,} duplicates) from "
                    f"{md_escape(result.source)}: AP **{result.ap:.2f}**, "
                    f"best F1 **{result.f1:.2f}** "
                    f"at threshold **{result.threshold:.3f}** (precision {result.precision:.1f}, "
                    f"recall {result.recall:.1f}).")
        share_warning(judged, result)
        st.plotly_chart(precision_recall_figure(result.curve, result.threshold, threshold),
                        width="stretch", key="new-curve")
        if st.button(f"Use {result.threshold:.3f} as the threshold of {md_escape(result.model)}",
                     type="primary"):
            cal.save_threshold(app, result)
            st.session_state.pop(CAL_JOB, None)
            st.rerun()


app = page_app()
st.title("Duplicates")
guide_link("duplicates")
with app.db.session() as session:
    summaries = repo.summaries(session)
if not summaries:
    st.info("No corpus yet: add one on the Upload page.", icon=":material/info:")
    st.stop()

chosen_corpus = corpus_picker(summaries, describe=False)  # in the address, remembered
corpus_name, model_name = chosen_corpus.name, chosen_corpus.model_name
default, source = threshold_for(app, model_name)
calibration = stored_calibration(app, model_name)
slider_key = f"dup-threshold-{model_name}-{default:.4f}"  # a new calibration resets it
initial = float(round(default, 3))  # the calibrated value itself, not a rounded neighbour

left, right = st.columns([3, 1])
chosen = left.slider(
    "Threshold (cosine)", min_value=min(0.4, initial), max_value=1.0, value=initial,
    step=0.001, format="%.3f", key=slider_key,
    help="Pairs at or above this cosine count as duplicates (exact duplicates always do).")
k_value = right.number_input("Neighbours per document (k)", min_value=1, max_value=dup.MAX_K,
                             value=dup.DEFAULT_K, step=1, key="dup-k")
marker = f"{source} threshold of {md_escape(model_name)}: **{default:.3f}**"
if calibration is None:
    marker += " (calibrate it on labelled pairs in the last tab)"
left.caption(f"▲ {marker}")
if abs(chosen - initial) > 1e-9:
    left.button(f"Back to {initial:.3f}", key="dup-reset",
                on_click=lambda: st.session_state.update({slider_key: initial}))

pairs_view, review_view, check_view, calibrate_view = st.tabs(
    ["Pairs and groups", "Review", "Check a new document", "Threshold calibration"],
    key="dup-tab", on_change="rerun")
with pairs_view:
    pairs_tab(corpus_name, float(chosen), int(k_value),
              calibration["threshold"] if calibration else None)
with review_view:  # only when open: its keyboard shortcuts must not act on a hidden tab
    if review_view.open:
        review_tab(app, corpus_name, float(chosen), int(k_value))
        confirmed_groups_section(app, corpus_name)
with check_view:
    check_tab(corpus_name, float(chosen))
with calibrate_view:
    calibrate_tab(corpus_name, model_name, float(chosen), calibration)
