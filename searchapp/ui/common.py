"""Small helpers the pages share: errors as messages, corpus choice, job progress.

They only arrange Streamlit elements around core calls; the work itself lives
in the core (``searchapp.corpora.service``, ``searchapp.search.service``, ``searchapp.jobs``).

Example (inside a page script):
    >>> app = page_app()                                   # doctest: +SKIP
    >>> with user_errors():                                # doctest: +SKIP
    ...     hits = search(app, corpus, query)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

import streamlit as st
from streamlit.errors import StreamlitAPIException

from searchapp.base.bidi import isolate_rtl
from searchapp.context import App
from searchapp.corpora.csv_safe import spreadsheet_bytes
from searchapp.errors import SearchAppError
from searchapp.jobs import queue
from searchapp.jobs.horizon import split_message
from searchapp.reporting import md_escape
from searchapp.store import repo
from searchapp.store.schema import utcnow
from searchapp.ui.job_report import failure_notice
from searchapp.ui.resources import ensure_background_worker, get_app, warm_up
from searchapp.ui.url_state import (
    CORPUS_PARAM,
    UrlState,
    pick_default,
    read_last_corpus,
    write_last_corpus,
)

POLL_SECONDS = 1.0
CORPUS_KEY = "searchapp.corpus"  # the corpus last chosen or uploaded, shared by the pages
PICKER_KEY = "corpus-picker"  # the corpus selectbox's widget key (the same on every page)
STATUS_COLORS = {"queued": "gray", "running": "blue", "succeeded": "green",
                 "failed": "red", "cancelled": "orange"}


@contextmanager
def user_errors(prefix: str = "") -> Iterator[None]:
    """Show a SearchAppError as ``st.error`` (its message says what to fix) and go on.

    ``prefix`` puts context in front of the message, e.g. "Nothing was stored. ".
    """
    try:
        yield
    except SearchAppError as exc:
        st.error(md_escape(f"{prefix}{exc}"), icon=":material/error:")


def page_app() -> App:
    """The shared App, with a background worker alive and the models loading in the background.

    Stops the page with a message when the settings are invalid.
    """
    try:
        app = get_app()
    except SearchAppError as exc:
        st.error(md_escape(f"The app cannot start: {exc}"), icon=":material/error:")
        st.stop()
    ensure_background_worker(app)
    warm_up(app)
    return app


def page_link(path: str, label: str, icon: str | None = None) -> None:
    """A link to another page of the app (``path`` as given to st.Page in app.py).

    A page run on its own (AppTest of one file) has no navigation; it says where to go.
    """
    try:
        st.page_link(path, label=label, icon=icon)
    except StreamlitAPIException:
        st.caption(f"{md_escape(label)}: open it from the sidebar.")


def md_code(text: str) -> str:
    """User text (an id) as an inline code span, shown as typed: inside code nothing is
    markup, so it is not escaped (an escape would show: "ag\\-17"); the fence is longer than
    any run of backticks in the text.

    Example:
        >>> md_code("ag-17"), md_code("a`b")
        ('`ag-17`', '``a`b``')
    """
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# Streamlit leaves 6rem above a page's first element (room for its toolbar): 2.5rem do,
# and the title needs no padding of its own above it.
# The style sits in a hidden container, so it takes no row and no gap of its own.
COMPACT_TOP = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 2.5rem; }
[data-testid="stMainBlockContainer"] h1 { padding-top: 0; }
.st-key-page-style { display: none; }
</style>"""


def compact_top() -> None:
    """Less empty space above the page's title, for a page whose first screen is precious
    (Search: its results).

    Example (anywhere in a page script; the Search page draws it last, so that its
    first elements stay its own):
        >>> compact_top()                                      # doctest: +SKIP
    """
    with st.container(key="page-style"):
        st.markdown(COMPACT_TOP, unsafe_allow_html=True)  # our constant, no user text


# Every element that holds a document's or a user's text reads its direction from that text,
# paragraph by paragraph, as ``dir="auto"`` does: an Arabic or Hebrew snippet runs right to
# left (its full stop at its left end), an English one beside it left to right. Streamlit's
# Markdown takes no attribute of ours, so this is the style's ``unicode-bidi: plaintext``
# (and ``text-align: start``, which then follows each paragraph's own direction).
TEXT_DIRECTION = """<style>
[data-testid="stMarkdownContainer"] :is(p, li, h1, h2, h3, h4, h5, h6, blockquote, td, th),
[data-testid="stExpander"] summary, [data-testid="stTooltipContent"],
[data-testid="stAlertContentInfo"], [data-testid="stText"] {
  unicode-bidi: plaintext; text-align: start; }
.st-key-text-direction { display: none; }
</style>"""


def csv_download(label: str, make_csv: Callable[[], str], file_name: str, where=st,
                 icon: str = ":material/download:", **options) -> None:
    """A download button for a table as CSV, made only when clicked: every CSV the pages
    offer is UTF-8 after a byte order mark (``spreadsheet_bytes``: Excel then reads
    Arabic, Japanese and accents right) and leaves the page as it was (no rerun).
    ``where``: a column or container to draw it in; ``options``: the button's own (key,
    help, type).

    Example:
        >>> csv_download("Clusters (CSV)", lambda: "id\\r\\n1\\r\\n", "c.csv")  # doctest: +SKIP
    """
    where.download_button(label, lambda: spreadsheet_bytes(make_csv()), file_name=file_name,
                          mime="text/csv", icon=icon, on_click="ignore", **options)


def rtl_cells(frame, columns: list[str]):
    """``frame`` with the cells of ``columns`` that hold right-to-left text isolated
    (``base/bidi.isolate_rtl``), for ``st.dataframe``: its grid is drawn on a canvas, where no
    style reaches, and an Arabic cell's full stop would stand at its wrong end.

    Example:
        >>> import pandas as pd
        >>> rtl_cells(pd.DataFrame({"text": ["abc"]}), ["text"]).text.tolist()
        ['abc']
    """
    present = [c for c in columns if c in frame.columns]
    return frame.assign(**{c: frame[c].map(isolate_rtl) for c in present}) if present else frame


def text_direction() -> None:
    """Each paragraph of every page in the direction of its own script (``TEXT_DIRECTION``);
    drawn once per run by ``app.py``, in the sidebar, so that it takes no row of a page.

    Example (in ``app.py``):
        >>> text_direction()                                   # doctest: +SKIP
    """
    with st.sidebar.container(key="text-direction"):
        st.markdown(TEXT_DIRECTION, unsafe_allow_html=True)  # our constant, no user text


def corpus_summaries(app: App) -> list[repo.CorpusSummary]:
    """Every corpus with its document and embedded counts, by name."""
    with app.db.session() as s:
        return repo.summaries(s)


def corpus_summaries_or_stop(app: App) -> list[repo.CorpusSummary]:
    """The corpora; with none, a pointer to the Upload page and the page stops here."""
    summaries = corpus_summaries(app)
    if not summaries:
        st.info("No corpus yet: add one on the Upload page (or load the sample corpus there).",
                icon=":material/info:")
        page_link("searchapp/ui/pages/upload.py", "Upload", icon=":material/upload_file:")
        st.stop()
    return summaries


def corpus_picker(corpora: list[repo.CorpusSummary], label: str = "Corpus",
                  describe: bool = True) -> repo.CorpusSummary:
    """A selectbox of corpora that remembers the choice: in the address (``?corpus=``),
    across the pages of a session, and as the data folder's last-used corpus.

    The address wins when it names a corpus this session did not put there (a
    link opened, a reload, Back); an unknown name there is said, not obeyed.
    ``describe`` adds the document counts to each name. Below it, once per session, a
    notice names the files the corpus' last ingest left out (``job_report``).
    """
    names = [c.name for c in corpora]
    data_dir = get_app().settings.data_dir
    url = UrlState(st.query_params, st.session_state)
    asked = url.incoming(CORPUS_PARAM)
    if asked and asked[0] in names:
        chosen = asked[0]
    elif (kept := st.session_state.get(PICKER_KEY)) in names:
        chosen = kept
    else:
        if asked:
            st.warning(md_escape(f"No corpus named {asked[0]!r} (from the address); showing "
                                 "another."), icon=":material/warning:")
        chosen = names[pick_default(
            names, st.session_state.get(CORPUS_KEY), read_last_corpus(data_dir))]
    # Set on every run, not only when it changes: a widget's own value does not follow it
    # to another page (the new page's selectbox would start on the first corpus); a value
    # set through the session does.
    st.session_state[PICKER_KEY] = chosen
    fmt = (lambda n: _corpus_label(corpora[names.index(n)])) if describe else str
    name = st.selectbox(md_escape(label), names, key=PICKER_KEY, format_func=fmt)
    remember_corpus(name)
    failure_notice(get_app(), name)  # files its last ingest left out, once per session
    return corpora[names.index(name)]


def remember_corpus(name: str) -> None:
    """Make ``name`` the corpus of this session, of the address and of the data folder."""
    st.session_state[CORPUS_KEY] = name
    UrlState(st.query_params, st.session_state).write(CORPUS_PARAM, name)
    write_last_corpus(get_app().settings.data_dir, name)


def remembered_corpus(names: list[str]) -> str | None:
    """The corpus this session (or, for a new session, the data folder) used last, if any."""
    data_dir = get_app().settings.data_dir
    index = pick_default(names, st.session_state.get(CORPUS_KEY), read_last_corpus(data_dir))
    return names[index] if names else None


def two_cosines(score: float, threshold: float) -> tuple[str, str]:
    """``score`` and ``threshold`` with enough digits (3 to 6) that the one below shows
    below: never "0.800, below the threshold 0.800".

    Example:
        >>> two_cosines(0.79996, 0.8)
        ('0.79996', '0.80000')
        >>> two_cosines(0.793, 0.808)
        ('0.793', '0.808')
    """
    digits = 3
    while digits < 6 and score != threshold and \
            round(score, digits) == round(threshold, digits):
        digits += 1
    return f"{score:.{digits}f}", f"{threshold:.{digits}f}"


def seed_corpus(key: str, names: list[str]) -> None:
    """Give a corpus selectbox (``key``) its value before it is drawn: the address's
    ``?corpus=`` when it names a corpus and is news to the widget, else what the widget
    had, else the corpus used last. Set only through the session, never as a default too.
    """
    url = UrlState(st.query_params, st.session_state)
    asked = url.current(CORPUS_PARAM)
    seen = f"{key}.address"  # the address value this widget followed last
    if asked and asked[0] in names and st.session_state.get(seen) != asked[0]:
        st.session_state[key] = st.session_state[seen] = asked[0]
    elif st.session_state.get(key) not in names:
        st.session_state[key] = remembered_corpus(names)


def _corpus_label(c: repo.CorpusSummary) -> str:
    if c.documents and c.embedded < c.documents:
        return f"{c.name} ({c.documents:,} documents, {c.embedded:,} embedded)"
    return f"{c.name} ({c.documents:,} documents)"


def ago(moment: datetime | None) -> str:
    """'12 s ago', '5 min ago', '3 h ago' or the date, for a naive UTC time."""
    if moment is None:
        return ""
    seconds = max(0, int((utcnow() - moment).total_seconds()))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h ago"
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def duration(job: queue.JobView) -> str:
    """How long a job ran (or has been running), e.g. '42 s' or '3 min 5 s'."""
    if job.started_at is None:
        return ""
    seconds = int(((job.finished_at or utcnow()) - job.started_at).total_seconds())
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60} s"


def done_line(job: queue.JobView) -> str:
    """What a finished job's success line says after its title: how long it took, or, for
    an embed job that found everything embedded already (embedded while the files were
    read), that, instead of a puzzling "done in 0 s".

    Example:
        "done in 42 s." or "done: every document was embedded while the files were read."
    """
    result = job.result or {}
    if job.kind == "embed" and result.get("embedded") == 0 and result.get("documents"):
        return "done: every document was embedded while the files were read."
    return f"done in {duration(job)}."


def progress_text(job: queue.JobView) -> str:
    """One line for a progress bar: status, done of total, the task's step, rate, time left.

    Example:
        "Running · 2,304 of 3,025 (76%) · Step 2 of 2: embedding · 412 documents/s ·
        about 2 s left"
    """
    if job.status == "queued":
        return "Queued: waiting for the background worker."
    if not job.progress_total and not job.message:
        return "Starting the worker..."
    text, horizon = split_message(job.message)
    parts = [job.status.capitalize()]
    if job.progress_total:
        parts.append(f"{job.progress_done:,} of {job.progress_total:,} "
                     f"({percent_done(job.progress_done, job.progress_total)}%)")
    if text:
        parts.append(_without_count(text, job))
    if horizon:
        parts.append(_of_this_step(horizon, text))
    return " · ".join(p for p in parts if p)


def percent_done(done: int, total: int) -> int:
    """Whole percent done, rounded down, so that 100% means done: what every bar and table
    prints, so that two of them showing the same counts show the same number.

    Example:
        >>> percent_done(7599, 7600), percent_done(2944, 7600), percent_done(0, 0)
        (99, 38, 0)
    """
    return 100 * done // total if total > 0 else 0


def _of_this_step(horizon: str, text: str) -> str:
    """'about 1 s left' → 'about 1 s left in this step' when more steps follow (the time
    left is the current step's, not the job's).

    Example:
        >>> _of_this_step("9 pairs/s · about 1 s left", "Step 2 of 5: training")
        '9 pairs/s · about 1 s left in this step'
        >>> _of_this_step("9 pairs/s · about 1 s left", "Step 5 of 5: the verdict")
        '9 pairs/s · about 1 s left'
    """
    step = re.search(r"Step (\d+) of (\d+)", text)
    if step and int(step.group(1)) < int(step.group(2)):
        return horizon.removesuffix(" left") + " left in this step"
    return horizon


def _without_count(text: str, job: queue.JobView) -> str:
    """The task's message minus an ``embedded 2,304 of 3,025`` that the bar already says."""
    count = f"{job.progress_done:,} of {job.progress_total:,}"
    if count not in text:
        return text
    head, _, _ = text.partition(":")
    return head if head != text else ""


def result_text(job: queue.JobView, skip: tuple[str, ...] = ()) -> str:
    """A finished job's result as 'key: value' pairs (scalars only, not ``skip``)."""
    items = [(k, v) for k, v in (job.result or {}).items()
             if k not in skip and isinstance(v, str | int | float | bool)]
    return " · ".join(f"{k}: {v}" for k, v in items[:8])


def job_progress(app: App, job_id: int, label: str = "", on_success=None) -> None:
    """A progress bar for one job, refreshed every second until it ends.

    When the job ends the whole page reruns, so what depends on it (counts,
    the search box) appears without a click; ``on_success()`` renders right under
    the "done" line (e.g. a link to the next step).
    """
    job = queue.get(app.db, job_id)
    run_every = None if job.finished else POLL_SECONDS
    st.fragment(_job_panel, run_every=run_every, key=f"job-panel-{job_id}")(
        app, job_id, label, job.finished, on_success)


def _job_panel(app: App, job_id: int, label: str, was_finished: bool, on_success) -> None:
    job = queue.get(app.db, job_id)
    if job.finished and not was_finished:
        st.rerun()
    job_status(job, label, on_success)


def job_status(job: queue.JobView, label: str = "", on_success=None) -> None:
    """One job as read: its bar while it runs, else the line that says how it ended (and
    ``on_success()`` under a success). ``job_progress`` redraws it every second; a page
    that must show other counts beside the bar reads both at once and draws this itself.

    Example:
        >>> job_status(queue.get(app.db, 12), "Embedding 'faq'")   # doctest: +SKIP
    """
    title = label or f"Job {job.id} ({job.kind})"
    if job.status == "succeeded":
        st.success(f"{md_escape(title)}: {done_line(job)}", icon=":material/check_circle:")
        if on_success is not None:
            on_success()
    elif job.status == "failed":
        st.error(f"{md_escape(title)} failed: {md_escape(job.error or '')}",
                 icon=":material/error:")
    elif job.status == "cancelled":
        st.warning(f"{md_escape(title)} was cancelled.", icon=":material/cancel:")
    else:
        st.progress(job.fraction, text=md_escape(f"{title}: {progress_text(job)}"))


def active_embed_job(app: App, corpus: str) -> queue.JobView | None:
    """The queued or running embedding job of a corpus, if any."""
    return queue.active_for(app.db, "embed", "corpus", corpus)
