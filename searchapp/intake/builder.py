"""Rows → documents: which columns are the text, the id and the metadata, checked row by row.

``plan_columns`` picks the columns (the caller's, or guessed from the first
rows); ``document_batches`` streams the table's rows into batches of
``NewDocument`` for the store, checking each row as it goes: an empty text is
skipped and counted, every cell's size is checked (``cells.check_cell``), an
id must be present and not repeat (``SeenIds``: both lines named). Without an
id column each document gets a stable id from its text (``sha256(text)[:16]``,
with ``-2``, ``-3`` ... for repeats inside the file), so uploading the same
file again adds nothing twice. Metadata is every other column a row has (a
JSON object's own keys), or the columns asked for, and ``lang``: the language of the row's
text (``language.detect``: ISO 639-1, "und" when too short or unsure to tell), unless the
row has its own ``lang`` or ``language`` column, which is kept as it is.

A column named like an id (``ID_COLUMN_GUESSES``: ``id``, ``ID``, ``doc_id``, ...)
is the id column unless the caller says there is none (``id_column=""``): an
empty or repeated value in it (exactly, or once spaces around are removed) is
an error naming the lines, never a silent switch to generated ids, which would
leave the file's own ids unknown to the corpus.

Example:
    >>> from searchapp.intake.ingest import read_table
    >>> table = read_table(b"question,answer\\nHow do I log in?,Click Sign in\\n", "faq.csv")
    >>> docs, skipped = to_documents(table)
    >>> docs[0].text, docs[0].meta
    ('How do I log in?', {'answer': 'Click Sign in', 'lang': 'und'})
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import pandas as pd

from searchapp.base.language import detect, has_language
from searchapp.corpora.names import check_id
from searchapp.errors import IngestError, InvalidParameterError
from searchapp.intake.cells import (
    MAX_ID_CHARS,
    MAX_META_CHARS,
    MAX_TEXT_CHARS,
    check_cell,
    check_name,
)
from searchapp.intake.columns import SEPARATOR, combined_name
from searchapp.intake.seen_ids import SeenIds
from searchapp.intake.table import Table
from searchapp.store.repo import NewDocument

TEXT_COLUMN_GUESSES = ("text", "question", "sentence", "body", "content", "title", "query",
                       "document", "passage", "description", "message", "summary", "abstract")
ID_COLUMN_GUESSES = ("id", "doc_id", "document_id", "qid", "question_id", "external_id", "key")
BATCH_DOCS = 5_000  # documents per batch handed to the store...
BATCH_CHARS = 8 << 20  # ...or fewer, when their text and metadata reach this many characters
MAX_META_COLUMNS = 1_000  # distinct metadata columns in one upload


@dataclass(frozen=True)
class ColumnPlan:
    """The text column, the id column (None: ids from the text) and the metadata columns
    (None: every other column a row has). With ``joined`` (two or more columns, a title
    and a body) the text is their cells joined in that order and ``text`` names the
    combination (``'title + body'``); those columns are not kept again as metadata."""

    text: str
    id: str | None = None
    meta: tuple[str, ...] | None = None
    id_guessed: bool = False
    joined: tuple[str, ...] = ()

    @property
    def text_columns(self) -> tuple[str, ...]:
        """The file's columns the text is read from."""
        return self.joined or (self.text,)

    def text_of(self, cells: dict[str, str]) -> str:
        """A row's text: its text cell, or the joined cells (empty ones left out)."""
        if not self.joined:
            return cells.get(self.text, "").strip()
        return SEPARATOR.join(part for c in self.joined if (part := cells.get(c, "").strip()))


@dataclass
class Counts:
    """What a pass over the rows saw besides documents."""

    rows: int = 0
    skipped_empty: int = 0
    documents: int = 0


def guess_text_column(frame: pd.DataFrame) -> str:
    """The likely text column: a well-known name, else the column with the longest texts.

    Example:
        >>> guess_text_column(pd.DataFrame({"a": ["short"], "b": ["a much longer text"]}))
        'b'
    """
    by_lower = {str(c).lower(): c for c in frame.columns}
    for name in TEXT_COLUMN_GUESSES:
        if name in by_lower:
            return by_lower[name]
    if len(frame.columns) == 0:
        raise IngestError("The file has no columns.")
    lengths = {c: sum(len(str(v)) for v in frame[c]) for c in frame.columns}
    return max(lengths, key=lengths.get)


def guess_id_column(frame: pd.DataFrame) -> str | None:
    """The first column named like an id (``ID_COLUMN_GUESSES``, any case), whatever its
    values: repeated or empty ones are then the upload's error, naming their lines.

    Example:
        >>> (guess_id_column(pd.DataFrame({"ID": ["a", "b"]})),
        ...  guess_id_column(pd.DataFrame({"id": ["a", "a"]})),
        ...  guess_id_column(pd.DataFrame({"name": ["a"]})))
        ('ID', 'id', None)
    """
    by_lower = {str(c).strip().lower(): c for c in frame.columns}
    for name in ID_COLUMN_GUESSES:
        if name in by_lower:
            return by_lower[name]
    return None


def _check_column(columns: list[str], column: str, role: str) -> None:
    if column not in columns:
        shown = [c if c and c.isprintable() and c == c.strip() else repr(c) for c in columns]
        raise IngestError(f"No {role} column {column!r}. Columns in the file: "
                          f"{', '.join(shown)}.")


def plan_columns(table: Table, text_column: str | Sequence[str] | None = None,
                 id_column: str | None = None, meta_columns: list[str] | None = None
                 ) -> ColumnPlan:
    """The columns to use, checked against the file's; guessed from its first rows when not
    given. ``text_column`` may list several columns, joined into the text in that order.
    ``id_column=None`` takes a column named like an id (``guess_id_column``);
    ``id_column=""`` means none: ids are made from the text.

    Example:
        >>> from searchapp.intake.ingest import read_table
        >>> plan_columns(read_table(b"qid,question,topic\\n1,Hi?,x\\n", "a.csv"))
        ColumnPlan(text='question', id='qid', meta=None, id_guessed=True, joined=())
        >>> plan_columns(read_table(b"t,b\\nHi,there\\n", "a.csv"), ["t", "b"], "").text
        't + b'
    """
    preview = table.preview()
    if text_column is not None and not isinstance(text_column, str):
        joined = tuple(dict.fromkeys(text_column))  # in order, each once
        if not joined:
            raise IngestError("Choose at least one text column.")
        text_column = joined[0] if len(joined) == 1 else None
        joined = joined if len(joined) > 1 else ()
    else:
        joined = ()
    text = combined_name(joined) if joined else (text_column or guess_text_column(preview))
    for column in joined or (text,):
        _check_column(table.columns, column, "text")
    sources = joined or (text,)
    guessed = False
    if id_column is None:
        id_column = guess_id_column(preview.drop(columns=list(sources)))
        guessed = id_column is not None
    if id_column:
        _check_column(table.columns, id_column, "id")
    meta = None
    if meta_columns is not None:
        for column in meta_columns:
            _check_column(table.columns, column, "metadata")
        meta = tuple(c for c in meta_columns if c not in (*sources, id_column))
    return ColumnPlan(text, id_column or None, meta, guessed, joined)


def document_batches(table: Table, plan: ColumnPlan, counts: Counts
                     ) -> Iterator[list[NewDocument]]:
    """The table's documents in batches, every row checked; ``counts`` filled as it goes.

    Raises IngestError naming the row for the first problem (an empty or repeated id
    included, whether the id column was chosen or taken by its name).

    Example:
        >>> from searchapp.intake.ingest import read_table
        >>> table, counts = read_table(b"id,text\\n1,hello\\n2,\\n", "a.csv"), Counts()
        >>> [[d.external_id for d in batch] for batch in
        ...  document_batches(table, ColumnPlan("text", "id"), counts)], counts
        ([['1']], Counts(rows=2, skipped_empty=1, documents=1))
    """
    wanted = None if plan.meta is None else {*plan.text_columns, *plan.meta} | (
        {plan.id} if plan.id else set())
    not_meta = {*plan.text_columns, plan.id}
    names: set[str] = set()
    pending: list[tuple[int, str, str, dict]] = []  # (row number, id, text, metadata)
    size = 0
    check_all = not table.clean  # else only lengths: the reader refused NUL and surrogates
    with SeenIds() as seen:
        for number, cells in table.rows(wanted):
            counts.rows += 1
            text = plan.text_of(cells)
            if not text:
                counts.skipped_empty += 1
                continue
            if check_all or len(text) > MAX_TEXT_CHARS:  # (check_cell says what is wrong)
                check_cell(text, "text", plan.text, table.label(number))
            doc_id = _row_id(cells, plan, table, number, check_all)
            if plan.meta is None:
                meta = {k: v for k, v in cells.items() if k not in not_meta}
            else:
                meta = {k: cells[k] for k in plan.meta if k in cells}
            if not has_language(meta):
                meta["lang"] = detect(text)[0]
            for key, value in meta.items():
                if check_all or len(value) > MAX_META_CHARS:
                    check_cell(value, "metadata", key, table.label(number))
                if key not in names:
                    _new_column(key, names, table.label(number))
            pending.append((number, doc_id, text, meta))
            size += len(text) + sum(len(v) for v in meta.values())
            if len(pending) >= BATCH_DOCS or size >= BATCH_CHARS:
                yield _documents(pending, plan, seen, table, counts)
                pending, size = [], 0
        if pending:
            yield _documents(pending, plan, seen, table, counts)
    if counts.rows == 0:
        raise IngestError(f"{table.filename} has no rows: there is nothing to upload.")
    if counts.documents == 0:
        raise IngestError(f"Every row has an empty {plan.text!r}: nothing to upload.")



def _row_id(cells: dict[str, str], plan: ColumnPlan, table: Table, number: int,
            check_all: bool) -> str:
    """The row's id from the id column ("" when ids are made from the text)."""
    if not plan.id:
        return ""
    doc_id = cells.get(plan.id, "").strip()
    if not doc_id:
        raise IngestError(f"{table.label(number)}: the id column {plan.id!r} is empty."
                          f"{_no_id_hint(plan)}")
    if check_all or len(doc_id) > MAX_ID_CHARS:
        check_cell(doc_id, "id", plan.id, table.label(number))
    if not doc_id.isprintable() or doc_id in (".", ".."):  # the one id rule (names.ID_RULE)
        try:
            check_id(doc_id)
        except InvalidParameterError as exc:
            raise IngestError(f"{table.label(number)}, column {plan.id!r}: {exc}") from None
    return doc_id


def _no_id_hint(plan: ColumnPlan) -> str:
    """What to do when the id column was taken by its name and is not one.

    Example:
        >>> _no_id_hint(ColumnPlan("text", "id", id_guessed=True))
        " Column 'id' is the id by its name; choose no id column ..."
    """
    if not plan.id_guessed:
        return ""
    return (f" Column {plan.id!r} is the id by its name; choose no id column (--id-column '' "
            "in the CLI, '(none: make ids from the text)' on the Upload page) to have ids "
            "made from the text instead.")


def _new_column(key: str, names: set[str], where: str) -> None:
    """A metadata column seen for the first time: its name checked, their number bounded."""
    check_name(key, where)
    names.add(key)
    if len(names) > MAX_META_COLUMNS:
        raise IngestError(f"{where}: the file has more than {MAX_META_COLUMNS:,} different "
                          "metadata columns. Keep the columns you filter on or show; put "
                          "the rest in the text.")


def _documents(pending: list[tuple[int, str, str, dict]], plan: ColumnPlan, seen: SeenIds,
               table: Table, counts: Counts) -> list[NewDocument]:
    """A batch's documents with their ids checked (or made)."""
    numbers = [p[0] for p in pending]
    if plan.id:
        ids = [p[1] for p in pending]
        repeat = seen.first_repeat(ids, numbers)
        if repeat is not None:
            doc_id, number, first = repeat
            raise IngestError(f"{table.label(number)} repeats id {doc_id!r} (first seen at "
                              f"{table.label(first)}). Ids must be unique.{_no_id_hint(plan)}")
    else:
        bases = [hashlib.sha256(p[2].encode("utf-8")).hexdigest()[:16] for p in pending]
        ids = [base if n == 1 else f"{base}-{n}"
               for base, n in zip(bases, seen.occurrences(bases, numbers), strict=True)]
    counts.documents += len(pending)
    return [NewDocument(doc_id, text, meta)
            for doc_id, (_, _, text, meta) in zip(ids, pending, strict=True)]


def to_documents(table: Table, text_column: str | None = None, id_column: str | None = None,
                 meta_columns: list[str] | None = None) -> tuple[list[NewDocument], int]:
    """Every document of a small table at once: (documents, rows skipped for an empty text).

    The upload streams (``document_batches``); this is for tests and one-off rows.

    Example:
        >>> from searchapp.intake.ingest import read_table
        >>> docs, skipped = to_documents(read_table(b"same\\nsame\\n\\n", "a.txt"))
        >>> [d.external_id for d in docs], skipped
        (['0967115f2813a354', '0967115f2813a354-2'], 1)
    """
    return _every_document(table, plan_columns(table, text_column, id_column, meta_columns))


def _every_document(table: Table, plan: ColumnPlan) -> tuple[list[NewDocument], int]:
    counts = Counts()
    docs = [d for batch in document_batches(table, plan, counts) for d in batch]
    return docs, counts.skipped_empty
