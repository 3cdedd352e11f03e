"""The API's request and response bodies; FastAPI makes the OpenAPI document from them.

Limits are part of the schema (a request outside them is a 422 before any work):
ids of 1-500 characters, texts up to 1,000,000, at most 1,000 documents or ids
per call, k from 1 to 1,000. Search hits have the shape of ``searchapp search
--json`` (``searchapp.search.service.hit_json``).

Example:
    >>> DocumentIn(id="q1", text="How do I reset my password?").meta
    {}
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from searchapp.corpora.documents import MAX_BATCH, MAX_TEXT_CHARS
from searchapp.corpora.names import MAX_ID_CHARS
from searchapp.search.service import MAX_K, MAX_QUERY_CHARS, MODES

DocId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS, examples=["q1"])]
MetaValue = str | int | float | bool | None


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---- problems -------------------------------------------------------------------------------
class FieldError(BaseModel):
    field: str
    message: str


class Problem(BaseModel):
    """RFC 9457 problem details: every error of the API."""

    type: str = Field(examples=["urn:searchapp:problem:not-found"])
    title: str = Field(examples=["Not Found"])
    status: int = Field(examples=[404])
    detail: str = Field(examples=["No corpus named 'faq'. Existing corpora: docs."])
    errors: list[FieldError] | None = None


# ---- corpora --------------------------------------------------------------------------------
class CorpusCreate(Strict):
    name: str = Field(min_length=1, max_length=200, examples=["faq"])
    model: str | None = Field(default=None, max_length=500,
                              description="default: the server's SEARCHAPP_MODEL")


class CorpusOut(BaseModel):
    name: str
    model: str
    documents: int
    embedded: int
    generation: int = Field(description="bumped by every change of its documents or vectors")
    meta_columns: list[str]
    active_jobs: list[int]
    ready: bool = Field(description="every document has a vector")


class CorpusList(BaseModel):
    corpora: list[CorpusOut]


class Deleted(BaseModel):
    deleted: str


# ---- documents -----------------------------------------------------------------------------
class DocumentIn(Strict):
    id: DocId
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS,
                      examples=["How do I reset my password?"])
    meta: dict[str, MetaValue] = Field(default_factory=dict, max_length=100,
                                       examples=[{"product": "billing", "year": 2024}])


class UpsertIn(Strict):
    documents: list[DocumentIn] = Field(min_length=1, max_length=MAX_BATCH)


class UpsertOut(BaseModel):
    corpus: str
    added: int
    updated: int = Field(description="texts replaced (embedded again)")
    metadata_updated: int = Field(description="metadata replaced, text unchanged")
    unchanged: int
    generation: int
    job_id: int | None = Field(description="the embed job for new and changed texts")


class DocumentOut(BaseModel):
    id: str
    text: str
    meta: dict[str, Any]
    embedded: bool
    source: str = Field("", description="what brought the document, in words (the app's "
                        "own record: a folder, an upload, a table, the API)")


class IdsIn(Strict):
    ids: list[DocId] = Field(min_length=1, max_length=MAX_BATCH)


class DocumentsOut(BaseModel):
    documents: list[DocumentOut]
    missing: list[str]


class DeleteOut(BaseModel):
    corpus: str
    deleted: int
    missing: list[str]
    generation: int


# ---- search and duplicates -----------------------------------------------------------------
class SearchIn(Strict):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       examples=["a dog running on the beach",
                                 'lease "notice period" -draft type:pdf after:2024-03-01'],
                       description='The query in the search box\'s language: "a phrase", '
                       '-word, -"a phrase", a OR b, and field filters (type:pdf, '
                       "folder:contracts, file:*.md, author:jane, lang:de, after:2024-03-01, "
                       "before:2025, any metadata column as col:value or col>=value).")
    k: int = Field(default=10, ge=1, le=MAX_K)
    mode: Literal[MODES] = "hybrid"  # type: ignore[valid-type]
    where: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=20, examples=[["product=billing", "year>=2024"]],
        description="metadata conditions COL OP VALUE (= != < <= > >=), all must hold")
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0,
                                    description="minimum cosine (semantic and hybrid)")
    rerank: bool = Field(default=False, description="the corpus' reranker reorders the first "
                         "30 candidates (409 no-reranker when the corpus has none)")
    answer: bool | None = Field(default=None, description="seek the sentences that answer "
                                "the query: true for any query, false never; null (default) "
                                "when the query reads as a question")
    as_typed: bool = Field(default=False, description="search the query as typed: no "
                           "correction of a misspelt word (did_you_mean stays null)")


class RankScore(BaseModel):
    rank: int | None
    score: float | None


class PassageOut(BaseModel):
    number: int
    start: int
    end: int


class SourceOut(BaseModel):
    """Where a hit of a document read from a file sits: its path relative to the folder or
    archive root, its type, and the page (PDF page, slide) and section (heading path) of
    the matched passage, null where they do not apply."""

    path: str
    type: str
    page: int | None
    section: str | None


class Hit(BaseModel):
    """One result. ``score`` is what the mode ranks by, which is not always a cosine:
    hybrid's is the reciprocal-rank fusion score (small numbers such as 0.33);
    ``semantic.score`` is the cosine the pages show, ``lexical.score`` the BM25."""

    id: str
    text: str
    score: float = Field(description="The ranking score of the mode: hybrid, the fusion "
                                     "score (not a cosine; see semantic.score); semantic, "
                                     "the cosine; lexical, BM25; reranked, the reranker's "
                                     "probability that the hit is relevant.")
    semantic: RankScore = Field(description="Rank and cosine by meaning (the pages' score).")
    lexical: RankScore = Field(description="Rank and BM25 by words.")
    passage: PassageOut | None
    snippet: str
    meta: dict[str, Any]
    source: SourceOut | None = None
    view: str | None = Field(None, description="A hit of a file: the app's reader view of "
                                               "the document at the matched part, the "
                                               "passage marked (a path on this server, "
                                               "as /view/manuals/guide.md?mark=120-480#s-3).")


class AnswerOut(BaseModel):
    """A sentence of a document that answers the query: extracted, never generated."""

    text: str
    doc_id: str
    source: SourceOut | None = None
    score: float = Field(description="The answer score the threshold reads: the sentence's "
                                     "cosine to the query blended with its passage's.")
    context: list[str] = Field(description="The sentence before and the sentence after it "
                                           "in its document ('' at either end).")
    start: int
    end: int
    view: str | None = Field(None, description="The reader view opened at the sentence.")


class AnswerInfo(BaseModel):
    asked: bool = Field(description="Whether an answer was sought (a question, or answer: true).")
    silent: bool = Field(description="Sought, and no sentence was clear enough: 'no clear "
                                     "answer in these documents'.")
    threshold: float
    threshold_source: str


class UnderstoodOut(BaseModel):
    """What the query language made of the query (docs/search.md, "The search box")."""

    text: str = Field(description="What meaning and words rank by: the query without its "
                                  "operators and filters.")
    phrases: list[str] = Field(description='Phrases every hit holds ("notice period").')
    excluded: list[str] = Field(description="Words and phrases no hit holds (-draft).")
    any_of: list[list[str]] = Field(description='OR groups holding a phrase: every hit '
                                    'holds one of each ("a b" OR c).')
    filters: list[str] = Field(description="The field filters applied, as written "
                                           "(type:pdf, folder:contracts, after:2024-03-01).")
    notices: list[str] = Field(description="One line per filter or field that could not "
                                           "apply, saying why and which fields exist.")


class DidYouMean(BaseModel):
    """The corrected query that was searched instead of the one typed: a word of it found
    nothing and the corpus has a frequent near word. Send ``as_typed: true`` with
    ``original`` to search it as typed."""

    query: str
    original: str
    corrected_words: list[tuple[str, str]] = Field(description="each [typed, corrected]")


class SearchOut(BaseModel):
    mode: str
    rerank: bool = False
    understood: UnderstoodOut | None = None


    did_you_mean: DidYouMean | None = None
    answers: list[AnswerOut] = Field(default_factory=list, description="The 1-3 sentences "
                                     "that answer the query, best first; empty when none is "
                                     "clear or none was sought.")
    answer: AnswerInfo | None = None
    missing: list[str] = Field(default_factory=list, description="Parts of the corpus that "
                               "did not answer (a shard with no live replica, under "
                               "SEARCHAPP_SEARCH_ENGINE=ray): when not empty the results are "
                               "partial, and documents held there are missing.")
    results: list[Hit]


class DuplicateCheckIn(Strict):
    text: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                      examples=["How can I change my password?"])
    threshold: float | None = Field(default=None, ge=0.0, le=1.0,
                                    description="default: the model's threshold")


class MatchOut(BaseModel):
    id: str
    text: str
    score: float


class DuplicateCheckOut(BaseModel):
    matches: list[MatchOut]


# ---- judgements ----------------------------------------------------------------------------
class JudgementIn(Strict):
    """A query and a document (relevance 0-3) or two documents (duplicate 0/1)."""

    query: str | None = Field(None, max_length=2_000, examples=["reset my password"])
    doc: DocId | None = None
    a: DocId | None = None
    b: DocId | None = None
    label: int = Field(ge=0, le=3, description="query: 0 not relevant .. 3 perfectly; "
                                                "pair: 1 duplicate, 0 not")


class JudgementOut(BaseModel):
    id: int
    corpus: str
    kind: Literal["query", "pair"]
    query: str | None
    a: str
    b: str | None
    label: int
    source: str
    created_at: datetime
    updated_at: datetime | None


class JudgementList(BaseModel):
    judgements: list[JudgementOut]
    next_cursor: str | None = Field(
        default=None, description="pass as ?cursor= for the next page; null on the last page")


# ---- jobs, models, snapshots ---------------------------------------------------------------
class FileProblem(BaseModel):
    path: str = Field(description="the file as the person knows it (path in its folder or "
                                  "archive, or the uploaded name)")
    reason: str = Field(description="why it was not read, and what to do")
    kind: str = Field(description="failed (could not be read), skipped (not a type we read, "
                                  "a link, a bad archive member), unreadable (not readable "
                                  "now), stopped (not looked at: the file limit), waiting "
                                  "(still being written; a later ingest reads it)")


class JobOut(BaseModel):
    id: int
    kind: str
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    progress_done: int
    progress_total: int
    message: str | None
    error: str | None
    cancel_requested: bool
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    payload: dict[str, Any]
    result: dict[str, Any] | None
    failures: list[FileProblem] = Field(
        default_factory=list, description="an ingest job's files not read, each with why "
        "and what to do (empty for other jobs and before the job ends)")


class JobList(BaseModel):
    jobs: list[JobOut]


class ModelOut(BaseModel):
    name: str
    source: str
    status: str
    base: str
    objective: str
    metrics: dict[str, Any]


class ModelList(BaseModel):
    models: list[ModelOut]


class SnapshotOut(BaseModel):
    name: str
    size: int
    created_at: str
    kind: str = Field(description="backup, or before-upgrade (taken by a schema upgrade)")
    schema_version: int | None
    corpora: list[dict[str, Any]]


class SnapshotList(BaseModel):
    snapshots: list[SnapshotOut]


class FolderIn(BaseModel):
    """A folder to watch into a corpus (made if new)."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(min_length=1, max_length=4096, examples=["/srv/docs/handbook"])
    corpus: str = Field(min_length=1, max_length=200, examples=["handbook"])
    include: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=50, examples=[["*.md", "*.pdf"]])
    exclude: list[Annotated[str, Field(min_length=1, max_length=500)]] = Field(
        default_factory=list, max_length=50, examples=[["drafts/*"]])


class FolderFiles(BaseModel):
    seen: int
    in_step: int
    waiting: int
    failed: int


class FolderOut(BaseModel):
    """A watched folder and its status (``searchapp watch list --json`` has the same keys)."""

    id: int
    corpus: str
    path: str
    include: list[str]
    exclude: list[str]
    state: Literal["watching", "syncing", "paused", "unavailable"]
    paused: bool
    available: bool
    reason: str | None
    files: FolderFiles
    failures: list[dict[str, str]]
    last_change: dict[str, int]
    last_change_at: str | None
    last_change_ago: str | None
    last_sync_at: str | None
    last_sync_ago: str | None
    job: int | None
    worker: str | None


class FolderList(BaseModel):
    folders: list[FolderOut]


# ---- saved searches ------------------------------------------------------------------------
class SavedIn(Strict):
    """A search to keep and watch (``searchapp saved add`` has the same fields)."""

    name: str = Field(min_length=1, max_length=200, examples=["contracts since March"])
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS,
                       examples=['"notice period" type:pdf -draft'],
                       description="as typed: phrases, exclusions and field filters included")
    k: int = Field(default=10, ge=1, le=MAX_K)
    mode: Literal[MODES] = "hybrid"  # type: ignore[valid-type]
    where: list[Annotated[str, Field(max_length=500)]] = Field(
        default_factory=list, max_length=20, examples=[["year>=2024"]])
    min_score: float | None = Field(default=None, ge=-1.0, le=1.0)
    webhook_url: str | None = Field(default=None, max_length=2000,
                                    examples=["https://hooks.example.org/searchapp"],
                                    description="POSTed the new hits as JSON (http or https)")
    desktop: bool = Field(default=False, description="a desktop notification where the "
                          "app runs on the user's machine")


class SavedOut(BaseModel):
    """A saved search: ``new`` is "N new" (documents that arrived after the last look and
    match); ``feed`` the path of its private Atom feed (the token in it is its password);
    ``last_outcome`` what its last check and notifications did."""

    id: int
    corpus: str
    name: str
    query: str
    mode: str
    k: int
    min_score: float | None
    where: list[str]
    created_at: str
    last_look_at: str | None
    watermark: int
    new: int
    feed: str
    webhook_url: str | None
    desktop: bool
    last_outcome: dict[str, Any]


class SavedList(BaseModel):
    saved: list[SavedOut]


class SavedHit(Hit):
    new: bool = Field(description="arrived after the last look")


class SavedResultsOut(BaseModel):
    saved: SavedOut
    hits: list[SavedHit] = Field(description="the hits now, the new ones first")


# ---- suggestions and history ------------------------------------------------------------
class SuggestionOut(BaseModel):
    """One suggestion: the whole query it would run, where it comes from (``recent``: your
    own search; ``title``, ``heading``, ``phrase``: the corpus') and how many documents
    hold it (0 for a recent search)."""

    text: str
    kind: Literal["recent", "title", "heading", "phrase"]
    count: int


class PastSearchOut(BaseModel):
    query: str
    corpus: str
    searched_at: datetime


class HistoryOut(BaseModel):
    """Your recent searches, most recent first (yours only: an API key sees its own)."""

    searches: list[PastSearchOut]


class HistoryCleared(BaseModel):
    cleared: int
