"""Single documents by id: upsert a batch, get, delete; for the API, the CLI and the pages.

The ids are the corpus' own (external) ids, chosen by the client, as in
Qdrant and Chroma. An upsert is idempotent: a new id is added, a changed text
replaces the stored one (a new row, embedded again by the corpus' ``embed``
job), changed metadata replaces the stored metadata in place (no embedding),
and a document sent as it is stored changes nothing, not even the generation.
A document's language is told from its text as an ingest tells it (``lang``, and ``langs``
when its paragraphs are in several: ``base.language``), unless its metadata names its own
(``lang`` or ``language``), which is kept as sent.
A delete removes the documents with their vectors. Every change is one
transaction that takes the corpus' next generation, so every process' indexes
and the full-text index follow as they do after an upload.

Example:
    >>> import tempfile
    >>> from searchapp.config import Settings
    >>> from searchapp.context import App
    >>> app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": tempfile.mkdtemp()}))
    >>> _ = create_corpus(app, "faq")
    >>> upsert(app, "faq", [Doc("q1", "How do I reset my password?", {"lang": "en"})]).added
    1
    >>> upsert(app, "faq", [Doc("q1", "How do I reset my password?", {"lang": "de"})]
    ...        ).metadata_updated
    1
    >>> get(app, "faq", "q1").meta
    {'lang': 'de'}
    >>> delete(app, "faq", ["q1", "q2"]).missing
    ['q2']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import select

from searchapp.base.language import document_languages, has_language
from searchapp.context import App
from searchapp.corpora.names import check_id, check_text_value
from searchapp.corpora.originals import OriginalNotFoundError, original_path
from searchapp.corpora.service import create_corpus, request_embed  # noqa: F401 - doctest
from searchapp.errors import DocumentNotFoundError, InvalidParameterError
from searchapp.store import repo, sources
from searchapp.store.documents import IN_LIMIT, chunks
from searchapp.store.schema import Document, Embedding

Doc = repo.NewDocument
MAX_BATCH = 1_000  # documents per upsert, get or delete call
MAX_TEXT_CHARS = 1_000_000
MAX_META_KEYS = 100
MAX_META_CHARS = 10_000  # per key or value


@dataclass(frozen=True)
class UpsertSummary:
    """What an upsert did, and the embed job that takes the new and changed texts."""

    corpus: str
    added: int
    updated: int  # texts replaced (embedded again)
    metadata_updated: int  # metadata replaced, text unchanged
    unchanged: int
    generation: int
    job_id: int | None

    def describe(self) -> str:
        """What the upsert did, in a line (the CLI and the Documents page show it).

        Example:
            >>> UpsertSummary("faq", 0, 1, 0, 0, 9, 4).describe()
            "Corpus 'faq': 1 text updated (generation 9); embedding job 4 queued."
        """
        parts = [f"{n} {what}" for n, what in ((self.added, "added"),
                                              (self.updated, "text updated"),
                                              (self.metadata_updated, "metadata updated"),
                                              (self.unchanged, "unchanged")) if n]
        job = f"; embedding job {self.job_id} queued" if self.job_id is not None else ""
        return f"Corpus {self.corpus!r}: {', '.join(parts)} (generation {self.generation}){job}."


@dataclass(frozen=True)
class StoredDocument:
    """One stored document: its id, text, metadata, whether it has a vector yet, and the
    app's record of what brought it (``source``, in words: ``store/sources.py``) and of
    the original file kept for it (``original``, its SHA-256; None for a row)."""

    id: str
    text: str
    meta: dict = field(default_factory=dict)
    embedded: bool = False
    source: str = ""
    original: str | None = None


@dataclass(frozen=True)
class DeleteSummary:
    corpus: str
    deleted: int
    missing: list[str]
    generation: int


def check_document(doc: Doc) -> Doc:
    """A document to store, checked: its id, a non-blank text, flat metadata of scalars."""
    external_id = check_id(doc.external_id)
    if not isinstance(doc.text, str) or not doc.text.strip():
        raise InvalidParameterError(f"Document {external_id!r} has an empty text; send its "
                                    "text, or delete the document.")
    if len(doc.text) > MAX_TEXT_CHARS:
        raise InvalidParameterError(f"Document {external_id!r} is longer than "
                                    f"{MAX_TEXT_CHARS:,} characters; split it.")
    check_text_value(doc.text, f"text of document {external_id!r}")
    meta = doc.meta or {}
    if not isinstance(meta, dict) or len(meta) > MAX_META_KEYS:
        raise InvalidParameterError(f"The metadata of document {external_id!r} must be an "
                                    f"object of at most {MAX_META_KEYS} keys.")
    for key, value in meta.items():
        if not isinstance(key, str) or not key.strip() or len(key) > 100:
            raise InvalidParameterError(f"Document {external_id!r}: metadata keys must be "
                                        "names of 1-100 characters.")
        check_text_value(key, f"metadata key of document {external_id!r}")
        if value is not None and not isinstance(value, str | int | float | bool):
            raise InvalidParameterError(
                f"Document {external_id!r}: metadata {key!r} must be a string, number, "
                "true/false or null (a column, as in an upload), not a list or an object.")
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidParameterError(f"Document {external_id!r}: metadata {key!r} must be "
                                        "a finite number.")
        if isinstance(value, str):
            if len(value) > MAX_META_CHARS:
                raise InvalidParameterError(f"Document {external_id!r}: metadata {key!r} is "
                                            f"longer than {MAX_META_CHARS:,} characters.")
            check_text_value(value, f"metadata {key!r} of document {external_id!r}")
    return Doc(external_id, doc.text, dict(meta))


def with_language(doc: Doc) -> Doc:
    """``doc`` with the language of its text in its metadata (``lang``, and ``langs`` when
    it mixes languages), as an ingest stores it; a document that names its own keeps it.

    Example:
        >>> with_language(Doc("q1", "Wo finde ich meine Rechnung vom letzten Monat?")).meta
        {'lang': 'de'}
        >>> with_language(Doc("q2", "Where is my invoice?", {"Language": "en-GB"})).meta
        {'Language': 'en-GB'}
    """
    if has_language(doc.meta or {}):
        return doc
    return Doc(doc.external_id, doc.text, {**(doc.meta or {}),
                                           **document_languages(doc.text, None)})


def parse_meta(items: Sequence[str]) -> dict:
    """``["product=billing", "year=2024"]`` (``--meta``, the page's lines) as a dict of
    strings, as an upload keeps its columns.

    Example:
        >>> parse_meta(["product=billing", "note=a=b", ""])
        {'product': 'billing', 'note': 'a=b'}
    """
    meta = {}
    for item in items:
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InvalidParameterError(f"Metadata {item!r}: write KEY=VALUE, e.g. "
                                        "product=billing.")
        meta[key.strip()] = value.strip()
    return meta


def _check_batch(items: Sequence, what: str) -> None:
    if not items:
        raise InvalidParameterError(f"No {what} given: send at least one.")
    if len(items) > MAX_BATCH:
        raise InvalidParameterError(f"At most {MAX_BATCH:,} {what} per call; got "
                                    f"{len(items):,}. Send them in batches.")


def upsert(app: App, corpus: str, docs: Sequence[Doc]) -> UpsertSummary:
    """Add or update documents of an existing corpus by id; queue the embedding of new and
    changed texts. Refuses the whole batch (storing nothing) if one document is invalid or
    an id repeats.

    Example:
        >>> upsert(app, "faq", [Doc("q7", "Where is my invoice?")]).job_id  # doctest: +SKIP
        12
    """
    _check_batch(docs, "documents")
    checked = [with_language(check_document(d)) for d in docs]
    seen: set[str] = set()
    for doc in checked:
        if doc.external_id in seen:
            raise InvalidParameterError(f"Document id {doc.external_id!r} appears twice in "
                                        "this batch; send each id once.")
        seen.add(doc.external_id)
    with app.db.session() as s:
        c = repo.get_corpus(s, corpus)
        name = c.name
        metadata_updated = repo.replace_meta(s, c, checked)
        result = repo.add_documents(s, c, checked, source=sources.API)
        s.flush()
        generation = repo.current_generation(s, c.id)
    changed_text = result.added + result.updated
    job_id = request_embed(app, name, new_rows=True) if changed_text else None
    return UpsertSummary(name, result.added, result.updated, metadata_updated,
                         result.unchanged - metadata_updated, generation, job_id)


def get_many(app: App, corpus: str, external_ids: Sequence[str]
             ) -> tuple[list[StoredDocument], list[str]]:
    """(the stored documents among ``external_ids``, in that order; the ids not stored).

    Example:
        >>> get_many(app, "faq", ["q1", "nope"])[1]               # doctest: +SKIP
        ['nope']
    """
    _check_batch(external_ids, "ids")
    wanted = list(dict.fromkeys(check_id(e) for e in external_ids))
    with app.db.session() as s:
        c = repo.corpus_state(s, corpus)
        model = repo.find_model(s, c.model_name)
        found: dict[str, StoredDocument] = {}
        for part in chunks(wanted, IN_LIMIT):
            q = select(Document.external_id, Document.text, Document.meta, Document.id,
                       Document.source, Document.original).where(
                Document.corpus_id == c.id, Document.external_id.in_(part))
            rows = s.execute(q).all()
            embedded: set[int] = set()
            if model is not None and rows:
                embedded = set(s.scalars(select(Embedding.document_id).where(
                    Embedding.model_id == model.id,
                    Embedding.document_id.in_([r[3] for r in rows]))))
            for e, t, m, i, source, original in rows:
                found[e] = StoredDocument(e, t, dict(m or {}), i in embedded,
                                          sources.describe(source), original)
    return [found[e] for e in wanted if e in found], [e for e in wanted if e not in found]


def get(app: App, corpus: str, external_id: str) -> StoredDocument:
    """One stored document by id; DocumentNotFoundError names the corpus and the id.

    Example:
        >>> get(app, "faq", "q1").text                            # doctest: +SKIP
        'How do I reset my password?'
    """
    found, _ = get_many(app, corpus, [external_id])
    if not found:
        with app.db.session() as s:
            name = repo.corpus_state(s, corpus).name
        raise DocumentNotFoundError(name, external_id)
    return found[0]


def delete(app: App, corpus: str, external_ids: Sequence[str]) -> DeleteSummary:
    """Delete documents by id with their vectors; ids not stored are reported, not an error.

    Example:
        >>> delete(app, "faq", ["q7"]).deleted                    # doctest: +SKIP
        1
    """
    _check_batch(external_ids, "ids")
    wanted = [check_id(e) for e in external_ids]
    with app.db.session() as s:
        c = repo.get_corpus(s, corpus)
        name = c.name
        deleted, missing = repo.delete_by_external_id(s, c, wanted)
        s.flush()
        generation = repo.current_generation(s, c.id)
    return DeleteSummary(name, len(deleted), missing, generation)


def original_of(app: App, corpus: str, external_id: str) -> tuple[Path, StoredDocument]:
    """The original file of a document of ``corpus`` and the document: the file the app
    kept when it read this document (its own record, per corpus), never one a metadata
    value names. OriginalNotFoundError for a document not read from a file.

    Example:
        >>> path, doc = original_of(app, "manuals", "guide.pdf")  # doctest: +SKIP
    """
    doc = get(app, corpus, external_id)
    if not doc.original:
        raise OriginalNotFoundError(f"Document {external_id!r} was not read from a file: it "
                                    "has no original.")
    return original_path(app.settings.originals_dir, doc.original), doc
