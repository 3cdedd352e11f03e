"""``ui.corpora_table.agreeing``: whatever state the embed job is in, the bar and its corpus'
row of the table show the same counts, and no other row changes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from searchapp.jobs.queue import JobView
from searchapp.store.repo import CorpusSummary
from searchapp.ui.common import percent_done
from searchapp.ui.corpora_table import agreeing

counts = st.integers(min_value=0, max_value=100_000)
rows_st = st.lists(st.builds(CorpusSummary, st.sampled_from(["a", "b", "c", "news"]),
                             st.just("m"), counts, counts),
                   max_size=4, unique_by=lambda r: r.name)


@given(rows=rows_st, status=st.sampled_from(["queued", "running", "succeeded", "failed",
                                             "cancelled"]),
       kind=st.sampled_from(["embed", "ingest"]), corpus=st.sampled_from(["a", "news", "zz"]),
       done=counts, total=counts)
def test_the_bar_and_its_row_show_the_same_counts(rows, status, kind, corpus, done, total):
    job = JobView(1, kind, status, {"corpus": corpus}, None, done, total, None, None, False,
                  None, None, None, None, 1)
    shown, shown_rows = agreeing(job, rows)
    assert [r.name for r in shown_rows] == [r.name for r in rows]
    assert [r for r in shown_rows if r.name != corpus] == [r for r in rows if r.name != corpus]
    row = next((r for r in shown_rows if r.name == corpus), None)
    if row is None or kind != "embed" or status not in ("queued", "running"):
        assert (shown, shown_rows) == (job, rows), "nothing to agree on: nothing changes"
        return
    assert (shown.progress_done, shown.progress_total) == (row.embedded, row.documents)
    assert percent_done(shown.progress_done, shown.progress_total) == \
        percent_done(row.embedded, row.documents)
