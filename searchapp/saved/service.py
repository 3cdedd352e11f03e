"""Saved searches: save one, list them with "N new", open one (the look), run, remove.

A saved search is a search kept as typed: its query (operators and field filters
included; ``search.service.search`` parses them), mode, k, minimum score and ``--where``
conditions, in one corpus. "N new" counts the documents its checks found (``check``):
those that arrived after the last look (id above its watermark) and are in its results.
Opening it runs it now, puts the new hits first, marks them new, and moves the watermark
to the corpus' newest document: the look. ``run`` is the same without the look unless
asked. Saved searches belong to the data folder: everyone who can log in sees them.

Example:
    >>> view = save(app, "faq", "cards", "lost card -stolen")            # doctest: +SKIP
    >>> [v.new for v in list_saved(app, "faq")]                           # doctest: +SKIP
    [0]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime

from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.saved.webhook import check_url
from searchapp.search.filters import check_columns, parse_conditions
from searchapp.search.hits import SearchHit, hit_json
from searchapp.search.service import check_mode, search, validate_query
from searchapp.store import repo
from searchapp.store import saved_searches as rows
from searchapp.store.schema import Corpus, SavedSearch, utcnow

FEED_PREFIX = "/feeds/saved/"
MAX_NAME = 200


@dataclass(frozen=True)
class SavedView:
    """A saved search as the front ends show it; ``new``: "N new"; ``feed``: the feed's
    path on the server (its token is the credential: share it as a password)."""

    id: int
    corpus: str
    name: str
    query: str
    mode: str
    k: int
    min_score: float | None
    where: list[str]
    created_at: datetime
    last_look_at: datetime | None
    watermark: int
    new: int
    feed: str
    webhook_url: str | None
    desktop: bool
    last_outcome: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        out = asdict(self)
        for key in ("created_at", "last_look_at"):
            out[key] = out[key].isoformat(timespec="seconds") + "Z" if out[key] else None
        return out


@dataclass(frozen=True)
class SavedResults:
    """A saved search run now: its hits (the new ones first) and which are new."""

    saved: SavedView
    hits: list[SearchHit]
    new_ids: frozenset[int]  # document ids (``SearchHit.doc_id``) of the new hits

    def is_new(self, hit: SearchHit) -> bool:
        return hit.doc_id in self.new_ids

    def as_json(self) -> dict:
        return {"saved": self.saved.as_json(),
                "hits": [{**hit_json(h), "new": self.is_new(h)} for h in self.hits]}


def feed_path(token: str) -> str:
    """The feed's path for a token: ``/feeds/saved/<token>.atom``."""
    return f"{FEED_PREFIX}{token}.atom"


def save(app: App, corpus: str, name: str, query: str, *, mode: str = "hybrid", k: int = 10,
         min_score: float | None = None, where: Sequence[str] = (),
         webhook_url: str | None = None, desktop: bool = False) -> SavedView:
    """Save a search of ``corpus`` under ``name``; what exists now is not news.

    Checked before anything is stored: the name (1 to 200 characters, free in the
    corpus), the query, mode, k and minimum score as the search checks them, the
    ``where`` conditions against the corpus' columns, the webhook address (http or https).

    Example:
        >>> save(app, "faq", "cards", "lost card", k=5,
        ...      webhook_url="https://hooks.example.org/x")        # doctest: +SKIP
    """
    name = (name or "").strip()
    if not name or len(name) > MAX_NAME:
        raise InvalidParameterError(f"A saved search's name must have 1 to {MAX_NAME} "
                                    "characters; give it one with --name.")
    query = validate_query(query, k, min_score)
    mode = check_mode(mode)
    url = check_url(webhook_url) if webhook_url else None
    with app.db.session() as s:
        found = repo.get_corpus(s, corpus)
        check_columns(parse_conditions(where), found.meta_columns or [], found.name)
        row = rows.add(s, found.id, name=name, query=query, mode=mode, k=int(k),
                       min_score=min_score, conditions=list(where), webhook_url=url,
                       desktop=bool(desktop))
        return _views(s, [row])[0]


def list_saved(app: App, corpus: str | None = None) -> list[SavedView]:
    """The saved searches of ``corpus`` (None: every corpus) with their "N new"."""
    with app.db.session() as s:
        corpus_id = repo.get_corpus(s, corpus).id if corpus is not None else None
        return _views(s, rows.listed(s, corpus_id))


def get_saved(app: App, saved_id: int) -> SavedView:
    """One saved search; SavedSearchNotFoundError when there is none with that id."""
    with app.db.session() as s:
        return _views(s, [rows.get(s, saved_id)])[0]


def remove(app: App, saved_id: int) -> SavedView:
    """Remove a saved search with its news; what it was."""
    with app.db.session() as s:
        view = _views(s, [rows.get(s, saved_id)])[0]
        rows.delete(s, saved_id)
    return view


def run(app: App, saved_id: int, look: bool = False) -> SavedResults:
    """Run the saved search now: its hits, those above the watermark first and marked new.

    ``look``: this is the user looking at them (opening it): the watermark moves to the
    corpus' newest document, and its "N new" goes to 0.

    Example:
        >>> results = run(app, 3, look=True)                          # doctest: +SKIP
        >>> [(h.id, results.is_new(h)) for h in results.hits][:2]     # doctest: +SKIP
        [('new.txt', True), ('old.txt', False)]
    """
    with app.db.session() as s:
        row = rows.get(s, saved_id)
        corpus = s.get(Corpus, row.corpus_id).name
        newest = rows.newest_document(s, row.corpus_id)  # before the search: a later one
        spec = (row.query, row.k, row.min_score, row.mode, list(row.conditions or []))
        watermark = row.watermark  # arriving meanwhile stays new
    query, k, min_score, mode, where = spec
    hits = search(app, corpus, query, k=k, min_score=min_score, mode=mode, where=where)
    new_ids = frozenset(h.doc_id for h in hits if h.doc_id > watermark)
    ordered = [h for h in hits if h.doc_id in new_ids] + \
        [h for h in hits if h.doc_id not in new_ids]
    with app.db.session() as s:
        row = rows.get(s, saved_id)
        if look:
            row.watermark, row.last_look_at = max(row.watermark, newest), utcnow()
        view = _views(s, [row])[0]
    return SavedResults(view, ordered, new_ids)


def _views(s, saved: Sequence[SavedSearch]) -> list[SavedView]:
    counts = rows.new_counts(s, saved)
    names = {r.corpus_id: s.get(Corpus, r.corpus_id).name for r in saved}
    return [SavedView(r.id, names[r.corpus_id], r.name, r.query, r.mode, r.k, r.min_score,
                      list(r.conditions or []), r.created_at, r.last_look_at, r.watermark,
                      counts[r.id], feed_path(r.feed_token), r.webhook_url, r.desktop,
                      dict(r.last_outcome or {}))
            for r in saved]
