"""Judgements: a person's labels on a corpus, stored, undone, counted, listed, exchanged as CSV.

Three kinds, each naming documents by the corpus' own (external) ids:

- ``query``: a query → a document, label a grade 0–3 (0 = not relevant, ≥ 1 relevant;
  a plain yes is 1);
- ``pair``: document ↔ document, label 1 (duplicate) or 0 (not); stored with a < b;
- ``answer``: a query → a sentence of a document shown as its answer (the document as a,
  the sentence as b), label 1 (right) or 0 (wrong): what calibrates the answer threshold
  (``searchapp.answers.threshold``).

One label per item: judging an item again replaces its label (a person changing
their mind). Every front end (the Search, Duplicates and Label pages, the
review queue, ``searchapp judge``, the API) calls these functions; ``source``
records which one it was. Evaluation runs (metrics measured on the judgements,
per model, over time) are stored here too, for the Evaluate page's history.

Example:
    >>> import tempfile
    >>> from searchapp.config import Settings
    >>> from searchapp.context import App
    >>> app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": tempfile.mkdtemp()}))
    >>> with app.db.session() as s:
    ...     c = repo.get_or_create_corpus(s, "faq", "all-MiniLM-L6-v2")
    ...     _ = repo.add_documents(s, c, [repo.NewDocument(i, f"question {i}")
    ...                                   for i in ("q3", "q7", "q12")])
    >>> j = add(app, "faq", query="reset password", doc="q12", label=1, source="cli")
    >>> add(app, "faq", a="q7", b="q3", label=1, source="review").a
    'q3'
    >>> counts(app, "faq")["relevant"], counts(app, "faq")["duplicate"]
    (1, 1)
    >>> remove(app, "faq", j.id).query
    'reset password'
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from searchapp.errors import (
    ConflictError,
    InvalidParameterError,
    JudgementError,
    JudgementNotFoundError,
)
from searchapp.judgements.csv_io import (
    ImportSummary,
    Item,
    ItemFile,
    batches,
    judgements_frame,
    store_items,
)
from searchapp.judgements.items import (  # noqa: F401 - part of this module's API
    KINDS,
    MAX_GRADE,
    SOURCES,
    check_kind,
    check_label,
    check_source,
    item_of,
    normalise_query,
)
from searchapp.store import judgement_rows as rows
from searchapp.store import repo

if TYPE_CHECKING:
    from searchapp.context import App

@dataclass(frozen=True)
class Judgement:
    """One stored judgement, detached from the database.

    ``a`` is the judged document of a query judgement, the smaller id of a pair;
    ``b`` is None for a query judgement; ``query`` is None for a pair.
    """

    id: int
    corpus: str
    kind: str
    query: str | None
    a: str
    b: str | None
    label: int
    source: str
    created_at: datetime
    updated_at: datetime | None = None

    @property
    def positive(self) -> bool:
        """Relevant (grade ≥ 1) or duplicate (1)."""
        return self.label >= 1


@dataclass(frozen=True)
class EvaluationRun:
    """Metrics of one model on a corpus' judgements, as saved by the evaluation."""

    id: int
    corpus: str
    model_name: str
    created_at: datetime
    metrics: dict
    judgements: int
    note: str


def _missing(app: App, corpus_id: int, name: str, ids: list[str]) -> None:
    with app.db.session() as s:
        found = rows.existing_external_ids(s, corpus_id, ids)
    absent = [i for i in ids if i not in found]
    if absent:
        raise JudgementError(
            f"No document {absent[0]!r} in corpus {name!r}. Judgements name documents by the "
            "ids the corpus shows (`searchapp search --corpus ... --json` prints them).")


def _documents_of(item: Item) -> list[str]:
    """The document ids an item names (an answer's b is its sentence, not a document)."""
    return [item.a] if item.kind == "answer" or item.b is None else [item.a, item.b]


def _view(row, corpus: str) -> Judgement:
    return Judgement(row.id, corpus, row.kind, row.query, row.a_id, row.b_id, row.label,
                     row.source, row.created_at, row.updated_at)


# ---- the API ------------------------------------------------------------------------------
def add(app: App, corpus: str, *, label: int | bool, query: str | None = None,
        doc: str | None = None, a: str | None = None, b: str | None = None,
        source: str, answer: str | None = None) -> Judgement:
    """Store a judgement (replacing an earlier label of the same item) and return it.

    Checks before writing: the source, the label's range for its kind, and that
    the documents are in the corpus.

    Example:
        >>> add(app, "faq", query="reset", doc="q12", label=1, source="cli")  # doctest: +SKIP
        Judgement(id=1, corpus='faq', kind='query', query='reset', a='q12', ...)
    """
    check_source(source)
    kind, q, a_id, b_id = item_of(query, doc, a, b, answer)
    value = check_label(kind, label)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    _missing(app, state.id, state.name, [a_id] if kind == "answer" or b_id is None else
             [a_id, b_id])
    try:
        with app.db.session() as s:
            return _view(rows.upsert(s, state.id, kind, q, a_id, b_id, value, source), state.name)
    except ConflictError:  # another writer inserted the same item at the same moment:
        with app.db.session() as s:  # it is there now, so this one updates it
            return _view(rows.upsert(s, state.id, kind, q, a_id, b_id, value, source), state.name)


def remove(app: App, corpus: str, judgement_id: int) -> Judgement:
    """Delete one judgement (undo) and return what it was.

    Example:
        >>> remove(app, "faq", 1).label                                    # doctest: +SKIP
        1
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        row = s.get(rows.Judgement, int(judgement_id))
        if row is None or row.corpus_id != state.id:
            raise JudgementNotFoundError(f"Corpus {state.name!r} has no judgement {judgement_id} "
                                 "(already undone, or made in another corpus).")
        gone = _view(row, state.name)
        rows.delete_judgement(s, state.id, int(judgement_id))
    return gone


def list_judgements(app: App, corpus: str, kind: str | None = None) -> list[Judgement]:
    """A corpus' judgements, oldest first; ``kind`` 'query', 'pair' or 'answer' for one kind.

    Example:
        >>> [j.label for j in list_judgements(app, "faq", kind="pair")]   # doctest: +SKIP
        [1, 0]
    """
    check_kind(kind)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        return [_view(r, state.name) for r in rows.judgement_rows(s, state.id, kind)]


MAX_PAGE = 1_000  # judgements per page of ``page_judgements`` (and the API's list)


@dataclass(frozen=True)
class JudgementPage:
    """One page of a corpus' judgements, oldest first; ``next_after`` continues the list
    (None: this was the last page)."""

    judgements: list[Judgement]
    next_after: int | None


def page_judgements(app: App, corpus: str, kind: str | None = None, after: int = 0,
                    limit: int = 100) -> JudgementPage:
    """Up to ``limit`` (1 to ``MAX_PAGE``) judgements with an id above ``after``, oldest first.

    Example:
        >>> page = page_judgements(app, "faq", limit=1)                   # doctest: +SKIP
        >>> page_judgements(app, "faq", after=page.next_after).judgements  # doctest: +SKIP
        [Judgement(id=2, ...)]
    """
    check_kind(kind)
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidParameterError(f"A page holds 1 to {MAX_PAGE} judgements; got {limit}.")
    if after < 0:
        raise InvalidParameterError(f"The cursor must be 0 or more; got {after}.")
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        found = rows.judgement_page(s, state.id, kind, after, limit + 1)
        page = [_view(r, state.name) for r in found[:limit]]
    return JudgementPage(page, page[-1].id if len(found) > limit else None)


def counts(app: App, corpus: str) -> dict[str, int]:
    """How many judgements of each kind and answer, and how many distinct queries.

    Keys: ``total``, ``query``, ``pair``, ``relevant`` (grade ≥ 1), ``not_relevant``,
    ``duplicate``, ``not_duplicate``, ``queries``, ``answer``, ``right_answer``,
    ``wrong_answer`` (``total`` counts queries and pairs, as before answers were judged).

    Example:
        >>> counts(app, "faq")                                             # doctest: +SKIP
        {'total': 3, 'query': 2, 'pair': 1, 'relevant': 1, 'not_relevant': 1, ...}
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        by_label = rows.label_counts(s, state.id)
        queries = rows.distinct_queries(s, state.id)
    relevant = sum(n for (k, lab), n in by_label.items() if k == "query" and lab >= 1)
    query_total = sum(n for (k, _), n in by_label.items() if k == "query")
    duplicate = by_label.get(("pair", 1), 0)
    pair_total = sum(n for (k, _), n in by_label.items() if k == "pair")
    return {"total": query_total + pair_total, "query": query_total, "pair": pair_total,
            "relevant": relevant, "not_relevant": query_total - relevant,
            "duplicate": duplicate, "not_duplicate": pair_total - duplicate, "queries": queries,
            "answer": by_label.get(("answer", 1), 0) + by_label.get(("answer", 0), 0),
            "right_answer": by_label.get(("answer", 1), 0),
            "wrong_answer": by_label.get(("answer", 0), 0)}


def texts(app: App, corpus: str, ids: list[str]) -> dict[str, str]:
    """{external id: text} of those of ``ids`` that are in the corpus (for showing, training).

    Example:
        >>> texts(app, "faq", ["q12"])                                     # doctest: +SKIP
        {'q12': 'How do I reset my password?'}
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        return rows.texts_by_external_id(s, state.id, ids)


def import_csv(app: App, corpus: str, source: bytes | str | Path, filename: str | None = None
               ) -> ImportSummary:
    """Read judgements from a CSV/TSV file (bytes or a path) into the corpus, all or nothing.

    Columns ``query,doc_id,label`` or ``a_id,b_id,label`` (both sets in one file
    work too: each row is read by which cells it fills, as ``export_csv`` writes
    them). See ``judgements.csv_io`` for the labels read. A bad row (an unknown
    id, a label out of range) stores nothing, and the message names its line.

    Example:
        >>> import_csv(app, "faq", b"a_id,b_id,label\\nq1,q2,1\\n", "pairs.csv")  # doctest: +SKIP
        ImportSummary(added=1, updated=0, unchanged=0, query=0, pair=1, repeated=0)
    """
    file = ItemFile(source, filename)
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
    unknown: set[str] = set()
    first_bad: tuple[Item, str] | None = None
    for batch in batches(file.items()):  # first pass: every row checked, nothing stored
        ids = {doc for item in batch for doc in _documents_of(item)}
        with app.db.session() as s:
            missing = ids - rows.existing_external_ids(s, state.id, ids)
        if missing:
            unknown |= missing
            first_bad = first_bad or next((item, doc) for item in batch
                                          for doc in _documents_of(item) if doc in missing)
    if first_bad is not None:
        item, doc = first_bad
        raise JudgementError(
            f"{item.where}: no document {doc!r} in corpus {state.name!r} "
            f"({len(unknown)} unknown id{'s' if len(unknown) > 1 else ''} in the file); "
            "nothing was imported. Use the corpus' document ids, or upload those documents "
            "first.")
    with app.db.session() as s:  # second pass: stored in one transaction, a batch at a time
        return store_items(s, state.id, file.items())


def export_csv(app: App, corpus: str, out: str | Path | None = None) -> str | None:
    """Write the corpus' judgements as CSV (to ``out``, or returned as text when None).

    Columns ``kind,query,doc_id,a_id,b_id,answer,label,source,created_at``; ``import_csv``
    reads the file back. Formula-like cells are escaped for spreadsheets.

    Example:
        >>> print(export_csv(app, "faq"))                                  # doctest: +SKIP
        kind,query,doc_id,a_id,b_id,answer,label,source,created_at
        pair,,,q1,q2,1,cli,2026-11-01 10:00:00
    """
    return judgements_frame(list_judgements(app, corpus), out)


# ---- evaluation runs (engineer B's Evaluate page) --------------------------------------------
def _plain(value):
    """numpy scalars and arrays as JSON numbers and lists."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise InvalidParameterError(
        f"Evaluation metrics must be numbers, text, lists or dicts; got {type(value).__name__}.")


def save_evaluation_run(app: App, corpus: str, model_name: str, metrics: dict, judgements: int,
                        note: str = "") -> EvaluationRun:
    """Store one evaluation's metrics (any JSON; numpy numbers are converted).

    Example:
        >>> save_evaluation_run(app, "faq", "all-MiniLM-L6-v2", {"ap": 0.84}, 120)  # doctest: +SKIP
        EvaluationRun(id=1, corpus='faq', model_name='all-MiniLM-L6-v2', ...)
    """
    plain = json.loads(json.dumps(metrics, default=_plain, allow_nan=True))
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        row = rows.add_evaluation_run(s, state.id, model_name, plain, int(judgements), note)
        return EvaluationRun(row.id, state.name, row.model_name, row.created_at, row.metrics,
                             row.judgements, row.note)


def evaluation_runs(app: App, corpus: str, model_name: str | None = None
                    ) -> list[EvaluationRun]:
    """A corpus' evaluation runs, oldest first (optionally one model's).

    Example:
        >>> [r.metrics["ap"] for r in evaluation_runs(app, "faq")]        # doctest: +SKIP
        [0.84, 0.86]
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        return [EvaluationRun(r.id, state.name, r.model_name, r.created_at, r.metrics,
                              r.judgements, r.note)
                for r in rows.evaluation_run_rows(s, state.id, model_name)]
