"""Reports as tables: one row per pair, or per group member (for CSV downloads).

The CSV forms (``pairs_csv``, ``groups_csv``) are what the CLI's ``--out`` and
the page's download buttons write; they go through ``searchapp.corpora.csv_safe`` so a
question starting with ``=`` stays text in a spreadsheet.

Example:
    >>> pairs_frame(report).columns.tolist()                     # doctest: +SKIP
    ['a', 'b', 'score', 'exact', 'a_text', 'b_text']
    >>> pairs_csv(report, "pairs.csv")                           # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from searchapp.corpora.csv_safe import safe_csv
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


def pairs_csv(report: DuplicateReport, path: str | Path | None = None) -> str | None:
    """Every pair as CSV (formula-safe): the text when ``path`` is None, else written there."""
    return safe_csv(pairs_frame(report), path)


def groups_csv(report: DuplicateReport, path: str | Path | None = None) -> str | None:
    """Every group member as CSV (formula-safe): the text, or written to ``path``."""
    return safe_csv(groups_frame(report), path)
