"""A new question: is it already in the corpus? And adding it when it is not.

One encoder pass and one index query: milliseconds, whatever the corpus size.
A document with the same normalised text is always a match.

Example:
    >>> check(app, "faq", "How can I change my password?")[0].id      # doctest: +SKIP
    'q12'
"""

from __future__ import annotations

from dataclasses import dataclass

from searchapp.context import App
from searchapp.duplicates.params import CHECK_K
from searchapp.duplicates.results import Match
from searchapp.pairs.text_keys import normalise
from searchapp.pairs.threshold import resolve_threshold
from searchapp.search.service import validate_query
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle, as_handle

NEAR_MISSES = 3  # closest documents below the threshold shown with "looks new"


@dataclass(frozen=True)
class CheckReport:
    """A new text against the corpus: the ``matches`` (cosine ≥ ``threshold``, or the same
    text) and the ``near_misses``, the closest documents below it, best first, so a person
    sees how close "looks new" was."""

    threshold: float
    matches: list[Match]
    near_misses: list[Match]


def check(app: App, corpus: str | CorpusHandle, question: str, threshold: float | None = None,
          k: int = CHECK_K) -> list[Match]:
    """Documents of the corpus that are likely duplicates of ``question`` (cosine ≥ threshold)."""
    return check_report(app, corpus, question, threshold, k).matches


def check_report(app: App, corpus: str | CorpusHandle, question: str,
                 threshold: float | None = None, k: int = CHECK_K,
                 near: int = NEAR_MISSES) -> CheckReport:
    """The matches of ``question`` and up to ``near`` closest documents below the threshold.

    Example:
        >>> report = check_report(app, "faq", "Someone stole my card, block it")  # doctest: +SKIP
        >>> [(m.id, m.score) for m in report.near_misses]                       # doctest: +SKIP
        [('q7', 0.7931)]
    """
    question = validate_query(question, k, None)
    handle = as_handle(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    vector = app.encoder(handle.model.name).encode([question])  # (1, dim)
    labels, scores = handle.index.search(vector, k)
    with app.db.session() as s:
        docs = repo.documents_by_id(s, labels[0].tolist())
    key = normalise(question)
    matches, misses = [], []
    for label, score in zip(labels[0].tolist(), scores[0].tolist(), strict=True):
        doc = docs.get(label)
        if doc is None:
            continue
        exact = bool(key) and normalise(doc.text) == key
        match = Match(doc.external_id, doc.text, round(float(score), 4), exact, dict(doc.meta))
        (matches if score >= threshold or exact else misses).append(match)
    return CheckReport(threshold, matches, misses[:near])


def add_question(app: App, corpus: str, question: str, external_id: str | None = None):
    """Add one question to the corpus and queue its embedding (returns the UploadSummary)."""
    from searchapp.intake.ingest import Table
    from searchapp.intake.table_upload import upload

    question = validate_query(question, 1, None)
    row = {"text": question} | ({"id": external_id.strip()} if external_id else {})
    table = Table.from_records([row], lambda n: "the new question")
    return upload(app, table, corpus, "text", "id" if external_id else None, meta_columns=[])
