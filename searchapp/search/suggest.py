"""Suggestions as you type: this user's recent searches, then the corpus' titles, headings
and frequent phrases, by what was typed.

``suggest(app, corpus, prefix, user)`` matches case- and accent-insensitively at word
starts: the user's recent searches of that corpus first (most recent first), then
the corpus' completions by weight (``search/completions.py``: titles, headings,
phrases, each weighted by how many documents hold it). With several words typed,
the last is the one being completed while the earlier ones stay: "how to chan"
offers a recent "how to change the port", a title starting so, or "how to " with a
completion of "chan" ("how to change"). An empty prefix offers the recent searches.

The completions of a corpus live in the App's memo under the corpus' generation,
built on the first call and brought up to date from the previous one (documents
added since, tombstones) when the generation moves: nothing leaves the process.

Example:
    >>> [(s.text, s.kind) for s in suggest(app, "faq", "def po", user="local")]  # doctest: +SKIP
    [('default port 8080', 'recent'), ('Default port', 'title'), ('default policy', 'phrase')]
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from sqlalchemy.orm import Session

from searchapp.context import App
from searchapp.errors import InvalidParameterError
from searchapp.search.completions import CompletionIndex
from searchapp.store import search_history
from searchapp.store.catalog import corpus_state
from searchapp.store.completion_sources import count_after, generation_of
from searchapp.store.search_history import fold

DEFAULT_LIMIT = 8
MAX_LIMIT = 50
MAX_PREFIX = 200  # characters: a longer "prefix" completes nothing
MEMO_KEY = ("completions",)
PHRASE_WORDS = 3  # a last word is completed by a phrase of at most this many words
_locks: dict[int, threading.Lock] = {}
_locks_guard = threading.Lock()
_building: set[int] = set()  # corpora whose completions a thread is building
SYNC_DOCUMENTS = 5_000  # documents to read before a keystroke's answer; more: on a thread
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Suggestion:
    """One suggestion: the whole query it would run, where it comes from and its weight
    (the documents holding it; 0 for a recent search)."""

    text: str
    kind: str  # "recent" | "title" | "heading" | "phrase"
    count: int

    def as_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind, "count": self.count}


def suggest(app: App, corpus: str, prefix: str, user: str | None = None,
            limit: int = DEFAULT_LIMIT) -> list[Suggestion]:
    """Up to ``limit`` completions of ``prefix`` in ``corpus``: ``user``'s recent searches
    first, then titles, headings and phrases by weight.

    Example:
        >>> suggest(app, "faq", "reset", user="local", limit=3)     # doctest: +SKIP
        [Suggestion(text='Reset your password', kind='title', count=1), ...]
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidParameterError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}.")
    typed = " ".join(prefix.split()) + (" " if prefix[-1:].isspace() and prefix.strip() else "")
    if len(typed) > MAX_PREFIX:
        return []
    folded = fold(typed) + (" " if typed.endswith(" ") else "")
    with app.db.session() as s:
        state = corpus_state(s, corpus)
        past = search_history.recent(s, user, state.id) if user else []
        index = completion_index(app, s, state.id, state.generation) if folded else None
    picked = _Picked(folded.strip(), limit)
    for query in (p.query for p in past):
        if _at_word_start(fold(query), folded):
            picked.add(Suggestion(query, "recent", 0))
    if index is not None:
        for c in index.complete(folded, limit):
            picked.add(Suggestion(c.text, c.kind, c.count))
        head, partial = _split_last(typed)
        if head and partial:
            for c in index.complete(partial, limit):
                if fold(c.text).startswith(partial) and len(c.text.split()) <= PHRASE_WORDS:
                    picked.add(Suggestion(head + c.text, c.kind, c.count))
    return picked.items


def completion_index(app: App, s: Session, corpus_id: int, generation: int
                     ) -> CompletionIndex | None:
    """The corpus' completions at ``generation``: from the memo, else the newest one kept
    brought up to date, else built (once per corpus at a time, others wait for it).

    Work of more than ``SYNC_DOCUMENTS`` documents (the first build of a large corpus: 1M
    documents take minutes) runs on a thread of its own: meanwhile a keystroke gets the
    index there was (or None: the user's recent searches alone), never a wait.
    """
    found = app.memo.get(corpus_id, generation, MEMO_KEY)
    if found is not None:
        return found
    previous = app.memo.latest(corpus_id, MEMO_KEY)
    index = previous[1] if previous is not None else None
    if index is None or index.stale:
        index = CompletionIndex(corpus_id)
    if count_after(s, corpus_id, index.last_id) > SYNC_DOCUMENTS:
        _build_later(app, corpus_id, index)
        return previous[1] if previous is not None else None
    with _lock_for(corpus_id):
        found = app.memo.get(corpus_id, generation, MEMO_KEY)
        if found is not None:
            return found
        index.catch_up(s, generation)
        app.memo.put(corpus_id, generation, MEMO_KEY, index)
        return index


def _build_later(app: App, corpus_id: int, index: CompletionIndex) -> None:
    """Bring ``index`` up to date on a thread (one per corpus at a time), then keep it."""
    with _locks_guard:
        if corpus_id in _building:
            return
        _building.add(corpus_id)

    def build() -> None:
        try:
            with _lock_for(corpus_id), app.db.session() as s:
                generation = generation_of(s, corpus_id)
                index.catch_up(s, generation)
                app.memo.put(corpus_id, generation, MEMO_KEY, index)
        except Exception:  # any failure: logged; the next keystroke tries again
            log.exception("building the completions of corpus %s failed", corpus_id)
        finally:
            with _locks_guard:
                _building.discard(corpus_id)

    threading.Thread(target=build, name=f"completions-{corpus_id}", daemon=True).start()


def _lock_for(corpus_id: int) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(corpus_id, threading.Lock())


def _at_word_start(text: str, folded_prefix: str) -> bool:
    """Whether ``folded_prefix`` starts ``text`` or one of its words (both folded)."""
    return text.startswith(folded_prefix) or f" {folded_prefix}" in f" {text}"


def _split_last(typed: str) -> tuple[str, str]:
    """(the words before the last, with a space; the last word folded), or ("", "") for one
    word or a finished last word.

    Example:
        >>> _split_last("How to Chan")
        ('How to ', 'chan')
    """
    if typed.endswith(" ") or " " not in typed:
        return "", ""
    head, last = typed.rsplit(" ", 1)
    return head + " ", fold(last)


class _Picked:
    """Suggestions in order, each text once, never the typed text itself, up to a limit."""

    def __init__(self, typed: str, limit: int):
        self.items: list[Suggestion] = []
        self._seen = {typed}
        self._limit = limit

    def add(self, suggestion: Suggestion) -> None:
        key = fold(suggestion.text)
        if len(self.items) < self._limit and key not in self._seen:
            self._seen.add(key)
            self.items.append(suggestion)
