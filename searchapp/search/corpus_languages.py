"""The languages a corpus' documents are written in, and those its words are searched in.

A corpus' languages are its documents' detected ``lang`` (``base/language``, told at
ingest) and the share of its documents in each, counted once per generation (the App's
memo). Two readers: hybrid search's words side (``translated_words``: is a query written
in the corpus' language?) and every full-text search of the corpus, which searches a
query's words also as their stems in the corpus' language it is written in
(``query_stem_languages``, ``store/fulltext.fts_chunks``; the index keeps each document's
stems in its own language).

Example:
    >>> corpus_languages(app, handle)                                   # doctest: +SKIP
    {'de': 0.95, 'en': 0.03}
    >>> stem_languages(app, handle)                                     # doctest: +SKIP
    ('de',)
    >>> query_stem_languages(app, handle, "list directory contents")    # doctest: +SKIP
    ()
"""

from __future__ import annotations

import re

from searchapp.base.language import UNDETERMINED, likeliest
from searchapp.base.stems import STEMMERS
from searchapp.context import App
from searchapp.store import repo
from searchapp.vectors.handle import CorpusHandle

_WORDS = re.compile(r"[^\W\d_]{2,}")  # words of letters: what a query's language is told from
LANGUAGES_READ = 50  # the corpus' most frequent document languages read
STEM_SHARE = 0.01  # a language of this share of the documents has its stems searched...
MAX_STEM_LANGUAGES = 4  # ...the most frequent of them, at most (each adds phrases to a query)


def language_counts(app: App, handle: CorpusHandle) -> tuple[tuple[str, int], ...]:
    """(language, documents) of the corpus' ``LANGUAGES_READ`` most frequent document
    languages, most first: one pass over its documents' metadata per generation (the App's
    memo; 0.07 s at 100,000 documents on SQLite, measured), shared by the two readers below."""
    def count() -> tuple[tuple[str, int], ...]:
        with app.db.session() as s:
            return tuple(repo.top_values(s, handle.corpus_id, "lang", LANGUAGES_READ))

    return app.memo.get_or_make(handle.corpus_id, handle.generation, ("language counts",),
                                count)


def corpus_languages(app: App, handle: CorpusHandle) -> dict[str, float] | None:
    """The corpus' document languages (their detected ``lang``) and the share of its
    documents in each; None when no language is told for half of them (then a query's
    words alone decide)."""
    documents = max(handle.documents, 1)
    told = {code: n / documents for code, n in language_counts(app, handle)
            if code != UNDETERMINED}
    return told if sum(told.values()) >= 0.5 else None


def stem_languages(app: App, handle: CorpusHandle) -> tuple[str, ...]:
    """The corpus' languages whose stems a query's words are searched as too: those of
    ``STEM_SHARE`` of its documents at least that have a stemmer (not English: the index's
    own porter stems it), most frequent first, at most ``MAX_STEM_LANGUAGES``.

    Unlike ``corpus_languages`` this reads any told languages, even where most documents
    have none: a stem only adds matches. None with ``SEARCHAPP_SEARCH_STEMS=0``."""
    if not app.settings.search_stems:
        return ()
    least = STEM_SHARE * max(handle.documents, 1)
    kept = [code for code, n in language_counts(app, handle) if code in STEMMERS and n >= least]
    return tuple(kept[:MAX_STEM_LANGUAGES])


def query_stem_languages(app: App, handle: CorpusHandle, query: str) -> tuple[str, ...]:
    """The languages whose stems ``query``'s words are searched as: of the corpus'
    ``stem_languages``, the one the query is told to be written in (``language.likeliest``
    among them and English); none for an English query, all of them when it cannot be told,
    and for a single word (one word is no evidence of a language: told among German and
    English, 7% of German words drawn from manual pages were "English", ``argumenten``).

    Measured on the translated manual pages (``benchmarks/languages.py``, BM25): stemming an
    English query in German, French or Spanish too cost 0.006-0.013 MRR@10 (its English
    words' German stems match other words there); told first, English queries lose nothing.
    """
    languages = stem_languages(app, handle)
    if not languages:
        return ()
    if len(_WORDS.findall(query)) < 2:
        return languages
    told = likeliest(query, {*languages, "en"})
    if told is None:
        return languages
    return (told,) if told in languages else ()
