"""Reports as tables: one row per pair, or per group member (for CSV downloads).

Example:
    >>> pairs_frame(report).columns.tolist()                     # doctest: +SKIP
    ['a', 'b', 'score', 'exact', 'a_text', 'b_text']
"""

from __future__ import annotations

import pandas as pd

from searchapp.duplicates.results import DuplicateReport

PAIR_COLUMNS = ["a", "b", "score", "exact", "a_text", "b_text"]
GROUP_COLUMNS = ["group", "representative", "size", "member", "score", "text"]


def pairs_frame(report: DuplicateReport, limit: int | None = None) -> pd.DataFrame:
    """One row per pair (the best ``limit``, or all): a, b, score, exact, a_text, b_text."""
    return pd.DataFrame([{**p.as_dict(), "a_text": p.a_text, "b_text": p.b_text}
                         for p in report.top_pairs(limit)], columns=PAIR_COLUMNS)


def groups_frame(report: DuplicateReport, limit: int | None = None) -> pd.DataFrame:
    """One row per group member: group, representative, size, member, score, text."""
    rows = [{"group": n, "representative": g.representative, "size": g.size, "member": m,
             "score": sc, "text": t}
            for n, g in enumerate(report.top_groups(limit), start=1)
            for m, sc, t in zip(g.members, g.scores, g.texts, strict=True)]
    return pd.DataFrame(rows, columns=GROUP_COLUMNS)
