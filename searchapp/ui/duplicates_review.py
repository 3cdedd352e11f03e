"""The Duplicates page's review: the queue of borderline pairs by keyboard, groups confirmed with
their canonical document, and the threshold calibrated on the corpus' own judgements.

- ``review_tab``: ``searchapp.duplicates.review`` one pair at a time; D / N / S / U
  answer duplicate, not, skip, undo, each a judgement (source 'review').
- ``confirm_group``: a group's members ticked as duplicates of the canonical one
  chosen (unticked ones judged not), and the confirmed groups as a CSV.
- ``judged_calibration``: the threshold for a precision the user chooses, with
  the expected pairs at each threshold (``searchapp.duplicates.judged_threshold``).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from searchapp import duplicates as dup
from searchapp.base.bidi import isolate_rtl
from searchapp.context import App
from searchapp.duplicates import calibration as cal
from searchapp.duplicates import judged_threshold as jt
from searchapp.duplicates import review
from searchapp.errors import SearchAppError
from searchapp.jobs import queue
from searchapp.judgements import service
from searchapp.judgements.groups import confirmed_groups, groups_csv
from searchapp.ui.common import csv_download, job_progress, md_escape, two_cosines
from searchapp.ui.labelling import (
    answer,
    keyboard_row,
    labelling_session,
    session_line,
    text_card,
    undo,
)
from searchapp.ui.resources import ensure_background_worker

BATCH = 20
REVIEW_KEYS = "Keys: **D** duplicate · **N** not · **S** skip · **U** undo"


def _key_of(item: review.ReviewItem) -> tuple[str, str]:
    return (item.a, item.b)


def review_tab(app: App, corpus: str, threshold: float, k: int) -> None:
    """The queue, or what it waits for (mining down to ``review_floor``)."""
    include_exact = st.toggle("Show exact copies too (last)", key="review-exact")
    try:
        first = review.review_queue(app, corpus, threshold, k, n=0)
    except SearchAppError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return
    if first is None:
        _wait_for_mining(app, corpus, threshold, k)
        return
    _review_one(app, corpus, threshold, k, include_exact)


def _wait_for_mining(app: App, corpus: str, threshold: float, k: int) -> None:
    floor = review.review_floor(threshold)
    job = queue.active_for(app.db, dup.KIND, "corpus", corpus)
    if job is not None:
        job_progress(app, job.id, f"Finding the pairs of {corpus!r} down to cosine {floor:.2f}")
        return
    st.info(f"The review starts with the pairs nearest the threshold {threshold:.3f}, on both "
            f"sides of it: it needs the corpus' pairs down to cosine {floor:.2f}.",
            icon=":material/info:")
    if st.button("Find them and start reviewing", type="primary", key="review-mine"):
        try:
            review.request_review_mining(app, corpus, threshold, k)
            ensure_background_worker(app)
        except SearchAppError as exc:
            st.error(md_escape(str(exc)), icon=":material/error:")
            return
        st.rerun()


@st.fragment
def _review_one(app: App, corpus: str, threshold: float, k: int, include_exact: bool) -> None:
    session = labelling_session(f"review-{corpus}-{threshold:.4f}-{k}-{include_exact}")
    status = review.review_queue(app, corpus, threshold, k, n=0 if session.queue else BATCH,
                                 include_exact=include_exact, exclude=session.skipped)
    if not session.queue and status is not None:
        session.queue = list(status.items)

    def save(item: review.ReviewItem, label: int) -> int:
        return service.add(app, corpus, a=item.a, b=item.b, label=label, source="review").id

    item = session.current
    if session.message:
        st.error(md_escape(session.message), icon=":material/error:")
    if item is None:
        st.success("Every pair near the threshold is decided (or skipped).",
                   icon=":material/task_alt:")
    else:
        with st.container(key="review-current"):
            side = "at or above" if item.score >= threshold else "below"
            score, limit = two_cosines(item.score, threshold)
            st.markdown(f"**Duplicates?** Cosine **{score}**, {side} the threshold "
                        f"{limit}" + (" · exact copy" if item.exact else ""))
            left, right = st.columns(2)
            with left:
                text_card(f"id {item.a}", item.a_text, "review-a")
            with right:
                text_card(f"id {item.b}", item.b_text, "review-b")
    shown = None if item is None else _key_of(item)  # the pair these buttons decide
    keyboard_row("review", [
        ("Duplicate", "d", "primary",
         lambda: answer(app, corpus, session, "yes", 1, save, _key_of, shown)),
        ("Not duplicate", "n", "secondary",
         lambda: answer(app, corpus, session, "no", 0, save, _key_of, shown)),
        ("Skip", "s", "secondary",
         lambda: answer(app, corpus, session, "skip", None, save, _key_of, shown)),
        ("Undo", "u", "tertiary", lambda: undo(app, corpus, session, _key_of)),
    ], disabled=item is None, shown=shown)
    line = session_line(session).replace(" yes", " duplicate").replace(" no ", " not ")
    if status is not None:
        line += (f" · {status.pending:,} pairs to decide, {status.decided:,} decided"
                 + (f", {status.exact_hidden:,} exact copies hidden" if status.exact_hidden
                    else ""))
    st.caption(f"{REVIEW_KEYS} · {line}")


def confirm_group(app: App, corpus: str, group: dup.DuplicateGroup, key: str) -> None:
    """Tick the members that are duplicates of the canonical document chosen; confirming
    stores a judgement per member (ticked: duplicate, unticked: not)."""
    canonical = st.selectbox("Canonical document", group.members, key=f"{key}-canonical",
                             format_func=lambda m: f"{m} · "
                             f"{group.texts[group.members.index(m)][:80]}")
    others = [m for m in group.members if m != canonical]
    ticked = st.multiselect("Duplicates of it", others, default=others, key=f"{key}-members")
    if st.button("Confirm this group", key=f"{key}-confirm", icon=":material/done_all:"):
        try:
            for m in others:
                service.add(app, corpus, a=canonical, b=m, label=int(m in ticked),
                            source="review")
        except SearchAppError as exc:
            st.error(md_escape(str(exc)), icon=":material/error:")
            return
        st.success(f"Confirmed: {len(ticked)} duplicates of {md_escape(canonical)}"
                   + (f", {len(others) - len(ticked)} not" if len(ticked) < len(others) else "")
                   + ".", icon=":material/done_all:")


def confirmed_groups_section(app: App, corpus: str) -> None:
    try:
        groups = confirmed_groups(app, corpus)
    except SearchAppError as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return
    st.subheader(f"Confirmed groups ({len(groups):,})")
    if not groups:
        st.caption("None yet: confirm a group above, or judge pairs as duplicates.")
        return
    st.caption("Documents joined by duplicate judgements; the canonical one is the member "
               "judged a duplicate most often.")
    csv_download("Download confirmed groups (CSV)", lambda: groups_csv(groups),
                 f"{corpus}-confirmed-groups.csv")
    st.dataframe([{"canonical": g.canonical, "text": isolate_rtl(g.texts[0]), "size": g.size,
                   "conflicts": g.conflicts} for g in groups], hide_index=True,
                 width="stretch", key="confirmed-groups",
                 column_config={"text": st.column_config.TextColumn(width="large")})


def judged_calibration(app: App, corpus: str, model: str, threshold: float) -> \
        jt.JudgedCalibration | None:
    """The threshold from the corpus' judgements for a chosen precision; returns the result
    (for the file calibration's share warning), or None with too few judgements."""
    st.subheader("On this corpus' judgements")
    try:
        result = jt.calibrate_on_judgements(app, corpus)
    except SearchAppError as exc:
        st.caption(md_escape(str(exc)))
        return None
    st.markdown(f"**{result.judged:,} judged pairs** ({result.positives:,} duplicates), "
                f"AP {result.ap:.1f} with {md_escape(model)}.")
    target = st.slider("Precision you want", 0.5, 0.99, 0.9, 0.01, key="judged-precision",
                       help="The share of the pairs above the threshold that are duplicates.")
    chosen = result.for_precision(target)
    rows = pd.DataFrame([r.__dict__ for r in result.rows])
    if result.floor is None:
        st.caption("Expected pair counts need the corpus' pairs: mine them on the first tab.")
    else:
        st.caption(f"Expected pairs and precision from the corpus' pairs down to cosine "
                   f"{result.floor:.2f}, their share of duplicates estimated at "
                   f"{result.share:.0%} from the judgements.")
    if chosen is None:
        st.warning(f"No threshold reaches precision {target:.0%} on these judgements.",
                   icon=":material/warning:")
    else:
        expected = ("" if chosen.pairs is None else
                    f": **{chosen.pairs:,} pairs**, about {chosen.duplicates:,.0f} duplicates")
        st.markdown(f"Threshold **{chosen.threshold:.2f}** reaches {target:.0%}{expected} "
                    f"(now {threshold:.3f}).")
        if st.button(f"Use {chosen.threshold:.2f} as the threshold of {md_escape(model)}",
                     key="judged-use", type="primary"):
            cal.save_threshold(app, jt.as_calibration(app, result, chosen))
            st.rerun()
    st.dataframe(rows[rows["threshold"].round(2).isin(
        [round(x / 100, 2) for x in range(50, 101, 5)]
        + ([round(chosen.threshold, 2)] if chosen else []))],
        hide_index=True, width="stretch", key="judged-table",
        column_config={"threshold": st.column_config.NumberColumn(format="%.2f"),
                       "pairs": st.column_config.NumberColumn("pairs at or above"),
                       "precision": st.column_config.NumberColumn("expected precision",
                                                                  format="%.2f"),
                       "duplicates": st.column_config.NumberColumn("expected duplicates",
                                                                   format="%.0f"),
                       "judged": "judged at or above",
                       "judged_precision": st.column_config.NumberColumn(
                           "judged precision", format="%.2f")})
    return result


def share_warning(result: jt.JudgedCalibration | None, calibration: cal.Calibration) -> None:
    """The file calibration's warning when its share of duplicates is not the corpus'."""
    if result is None or not calibration.pairs:
        return
    words = jt.share_warning(calibration.positives / calibration.pairs, result,
                             calibration.threshold)
    if words:
        st.warning(md_escape(words), icon=":material/warning:")
