"""A table into a corpus: an opened upload stored in one transaction, then embedded.

An upload is one transaction: the documents are read, checked and stored a batch
at a time, together or not at all; then an ``embed`` job is queued for whatever
the corpus' model lacks. A re-upload is how documents are corrected: a row
whose id is stored already replaces its text (embedded again) or its metadata
(updated in place), and the summary says how many of each.

Example:
    >>> app = App(Settings.from_env({"SEARCHAPP_DATABASE_URL": "sqlite://"}))
    >>> summary = upload(app, read_table(b'text\\nhello\\n""\\nworld\\n', "a.csv"), "demo")
    >>> summary.added, summary.skipped_empty, summary.job_id is not None
    (2, 1, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from searchapp.config import Settings  # noqa: F401 - used in the doctest
from searchapp.context import App
from searchapp.corpora.language_advice import advice
from searchapp.corpora.service import model_for, request_embed, validate_corpus_name
from searchapp.intake.builder import ColumnPlan, Counts, document_batches, plan_columns
from searchapp.intake.ingest import Table, read_table  # noqa: F401 - used in the doctest
from searchapp.store import repo, sources


@dataclass(frozen=True)
class UploadSummary:
    """What an upload did: documents added, updated (a new text, embedded again; or new
    metadata only, updated in place), already stored, empty rows skipped; the embed job;
    notes about the file (a column left out)."""

    corpus: str
    added: int
    updated: int
    unchanged: int
    skipped_empty: int
    job_id: int | None
    meta_updated: int = 0
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        """One sentence for the CLI and the Upload page.

        Example:
            >>> UploadSummary("faq", 2, 1, 5, 0, 7, meta_updated=3).describe()
            "Corpus 'faq': 2 added, 4 updated (1 with a new text, 3 with new metadata only), \
5 already stored."
        """
        parts = [f"{self.added} added"]
        if self.updated or self.meta_updated:
            how = [f"{self.updated} with a new text" if self.updated else "",
                   f"{self.meta_updated} with new metadata only" if self.meta_updated else ""]
            parts.append(f"{self.updated + self.meta_updated} updated "
                         f"({', '.join(h for h in how if h)})")
        if self.unchanged:
            parts.append(f"{self.unchanged} already stored")
        if self.skipped_empty:
            rows = "row" if self.skipped_empty == 1 else "rows"
            parts.append(f"{self.skipped_empty} empty {rows} skipped")
        return " ".join([f"Corpus {self.corpus!r}: " + ", ".join(parts) + ".", *self.notes])


def upload(app: App, table: Table, corpus: str, text_column: str | Sequence[str] | None = None,
           id_column: str | None = None, meta_columns: list[str] | None = None,
           model: str | None = None) -> UploadSummary:
    """Store an opened upload in ``corpus`` (created if new) and queue its embedding.

    The rows are read, checked and written a batch at a time inside one
    transaction: memory holds a batch, never the file, and a problem anywhere
    (named by its line) stores nothing: a repeated or empty id too, in a chosen id
    column or one taken by its name (``id``, ``ID``, ...; ``id_column=""`` asks
    for ids made from the text instead).
    ``text_column`` may name several columns (a title and a body): their cells are
    joined, row by row, into the searched text and not kept again as metadata.
    """
    return _store(app, table, corpus, plan_columns(table, text_column, id_column,
                                                   meta_columns), model)


def _store(app: App, table: Table, corpus: str, plan: ColumnPlan, model: str | None,
           notes: tuple[str, ...] = ()) -> UploadSummary:
    counts = Counts()
    with app.db.session() as s:
        existing = repo.find_corpus(s, corpus)
        if existing is None:  # names stored before this rule keep working
            corpus = validate_corpus_name(corpus)
            existing = repo.find_corpus(s, corpus)
        model_name = model_for(app.settings, corpus, existing and existing.model_name, model)
        c = repo.get_or_create_corpus(s, corpus, model_name)
        writer = repo.DocumentWriter(s, c, sources.table_source(table.filename))
        for batch in document_batches(table, plan, counts):
            writer.add(batch)
        result = writer.finish()
        name = c.name
    job_id = request_embed(app, name, new_rows=bool(result.added or result.updated))
    advised = tuple(a for a in (advice(app, name),) if a)  # mostly not English: say so
    return UploadSummary(name, result.added, result.updated, result.unchanged,
                         counts.skipped_empty, job_id, result.meta_updated,
                         table.notes + notes + advised)
