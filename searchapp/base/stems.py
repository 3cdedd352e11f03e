"""Words reduced to their stems as each language forms them (Snowball, through PyStemmer).

The full-text index stems every word the English way (SQLite's ``porter``), which leaves
the endings of other languages alone: ``Dateien`` never finds ``Datei``, ``fichiers`` never
``fichier``, ``archivos`` never ``archivo``. This module gives a document's words a second
form, the stems of the language its text is written in (``stem_stream``), and a query's
words the stems each language of the corpus would give them (``query_stems``); the index
keeps the stems in a column of their own (``store/fulltext.py``), so the words as written
still match exactly as before, and a stem only adds matches (Elasticsearch's
``keyword_repeat`` does the same: the word and its stem side by side).

A document is stemmed in the language ``language.detect`` tells from its text alone, never
from its metadata: the index is contentless, and a document leaves it by the very words it
was indexed with, so those must be made again from the stored text whatever its metadata
has become since. The language is told from a sample (``SAMPLE_CHARS``: about 0.06 ms for a
question, 0.4 ms for a long page) where the detector tells one (``MIN_CONFIDENCE``, as the
``lang`` ingest gives a document: of 5,000 English TREC questions one is then told Dutch);
English text, text whose language is not told and languages without a Snowball stemmer get
no stems. A query's words are stemmed in the corpus' language it is written in
(``search/corpus_languages.query_stem_languages``), never an English query's. English
is stemmed by the index itself (porter) and never here, so an English corpus indexes
exactly as before.

Snowball's stemmers are BSD-3-Clause; PyStemmer (MIT) runs them in C, about a million words
a second (``benchmarks/stemming.py``). A ``Stemmer`` object is not safe to share between
threads, so each thread has its own. Both libraries are pinned: a new version of either (or
of the detector) may give a stored text other stems, so it comes with a schema upgrade that
fills the index again (``store/upgrades.py``, as version 14 did).

Example:
    >>> stem_stream("Die Dateien werden gelesen und die Verzeichnisse neu erstellt.")
    'die datei werd geles und die verzeichnis neu erstellt'
    >>> stem_stream("The files are read and the directories are rebuilt from scratch.")
    ''
    >>> query_stems(["dateien", "xr"], ["de", "fr"])
    [('de', ['datei', 'xr']), ('fr', ['dateien', 'xr'])]
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

from searchapp.base.language import detect, sample
from searchapp.base.words import fold, spaced_only

# ISO 639-1 code -> Snowball algorithm (PyStemmer's names); English is the index's porter
STEMMERS = {
    "ar": "arabic", "ca": "catalan", "da": "danish", "de": "german", "el": "greek",
    "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish",
    "hi": "hindi", "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "nl": "dutch", "no": "norwegian", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil",
    "tr": "turkish",
}
SAMPLE_CHARS = 1_000  # of a text, read to tell its language (start, middle and end)
MIN_CONFIDENCE = 0.5  # the detector's below which a text gets no stems (as ingest's ``lang``)
WORD = re.compile(r"[^\W_]+", re.UNICODE)  # as FTS5's unicode61 cuts: letters and digits
_local = threading.local()


def stemmer(code: str):
    """This thread's Snowball stemmer for the language ``code`` (one of ``STEMMERS``)."""
    cache = _local.__dict__.setdefault("stemmers", {})
    if code not in cache:
        import Stemmer  # PyStemmer: loaded on first use

        cache[code] = Stemmer.Stemmer(STEMMERS[code])
    return cache[code]


def stem_language(text: str) -> str | None:
    """The language whose stems ``text`` gets: the one it is surely told to be written in,
    when it has a stemmer here; None for English (the index's porter), for code and for a
    text whose language is not surely told.

    Example:
        >>> stem_language("Le fichier est lu, puis l'index est reconstruit entièrement."), \\
        ...     stem_language("The file is read and the index rebuilt."), stem_language("ls -l")
        ('fr', None, None)
    """
    code, confidence = detect(sample(text, SAMPLE_CHARS))
    return code if confidence >= MIN_CONFIDENCE and code in STEMMERS else None


def stem_stream(text: str) -> str:
    """The stems of every word of ``text`` (spaced scripts; folded and lower-cased first), in
    their order and separated by spaces, in its ``stem_language``; '' when it has none.
    Their order is kept so that a phrase of stems matches where its words stand together.
    """
    code = stem_language(text)
    if code is None:
        return ""
    return " ".join(stemmer(code).stemWords(WORD.findall(spaced_only(fold(text)).lower())))


def query_stems(tokens: Sequence[str], languages: Sequence[str]) -> list[tuple[str, list[str]]]:
    """``tokens`` (a query chunk's words, lower-cased) stemmed in each of ``languages`` that
    has a stemmer, as (code, stems) in the order given.

    Example:
        >>> query_stems(["archivos"], ["es", "en", "ja"])
        [('es', ['archiv'])]
    """
    return [(code, stemmer(code).stemWords(list(tokens)))
            for code in languages if code in STEMMERS]
