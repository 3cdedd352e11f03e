"""A search's results as one CSV a spreadsheet opens: its answers first, then its hits.

One row per answer (``kind`` "answer", ranked 1 to 3: the sentence, the sentences before
and after it, its score) or, when an answer was sought and none was clear, one row of kind
"no clear answer" saying so; then one row per hit (``kind`` "hit", all k of them, not only
the page on screen: its snippet as the page shows it, its cosine and BM25). Both kinds
share the columns that say where the text stands (document id, file path, type, page,
section), so a sheet filtered on ``kind`` reads either list alone. Every cell goes through
``corpora.csv_safe`` (a text starting with ``=`` is no formula there).

Example:
    >>> from searchapp.search.hits import SearchHit
    >>> print(results_csv("port?", [SearchHit("a", "Port 5432.", 0.03, snippet="Port 5432.",
    ...                                       semantic_score=0.71)], None).splitlines()[1])
    port?,hit,1,a,Port 5432.,,,,,,,,0.71,
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from searchapp.answers.service import SILENCE, AnswerResult
from searchapp.corpora.csv_safe import safe_csv
from searchapp.search.hits import SearchHit

COLUMNS = ["query", "kind", "rank", "id", "text", "before", "after", "path", "type", "page",
           "section", "answer_score", "cosine", "bm25"]


def _where(source: dict | None) -> dict:
    source = source or {}
    return {"path": source.get("path"), "type": source.get("type"), "page": source.get("page"),
            "section": source.get("section")}


def _flat(text: str) -> str:
    return " ".join(str(text).split())


def result_rows(query: str, hits: Sequence[SearchHit], result: AnswerResult | None
                ) -> list[dict]:
    """The rows of ``results_csv``: answers (or the no-clear-answer row), then hits."""
    rows: list[dict] = []
    if result is not None and result.silent:
        rows.append({"query": query, "kind": "no clear answer", "text": SILENCE})
    for rank, a in enumerate(result.answers if result is not None else [], start=1):
        rows.append({"query": query, "kind": "answer", "rank": rank, "id": a.doc_id,
                     "text": _flat(a.text), "before": _flat(a.before), "after": _flat(a.after),
                     **_where(a.source), "answer_score": a.score, "cosine": a.cosine})
    for rank, h in enumerate(hits, start=1):
        rows.append({"query": query, "kind": "hit", "rank": rank, "id": h.id,
                     "text": _flat(h.snippet or h.text), **_where(h.source),
                     "cosine": h.semantic_score, "bm25": h.lexical_score})
    return rows


def results_csv(query: str, hits: Sequence[SearchHit], result: AnswerResult | None) -> str:
    """The CSV text of a search (see the module's docstring), spreadsheet-safe."""
    frame = pd.DataFrame(result_rows(query, hits, result), columns=COLUMNS)
    frame["rank"] = frame["rank"].astype("Int64")  # 1, not 1.0, beside the empty cell
    frame["page"] = frame["page"].astype("Int64")
    return safe_csv(frame)
