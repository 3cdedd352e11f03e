"""The app's advice when a corpus is mostly not in the language its model reads.

After an ingest (the job's report, a table upload's summary) and on the Search page,
``advice(app, corpus)`` proposes the multilingual model (``use-multilingual-v3``) for a
corpus whose documents are at least half (``SHARE``) in languages other than English
(their ``lang``, told at every way in) while its model reads English only: such a model
splits German or Japanese into English word pieces, and finds little by meaning. It says
the language, the model, and the exact command that re-embeds the corpus with it (the
Models page does the same). It says nothing when the corpus' model reads the language
already, or when the multilingual model does not read it either.

One grouped SQL pass over the corpus' ``lang`` values (``repo.top_values``), so a page
keeps the answer per corpus generation.

Example:
    >>> from searchapp.config import Settings
    >>> app = App(Settings.from_env({"SEARCHAPP_DATABASE_URL": "sqlite://"}))
    >>> from searchapp.corpora.documents import Doc, upsert
    >>> _ = create_corpus(app, "handbuch")
    >>> _ = upsert(app, "handbuch", [Doc("1", "Die Datei wird gelesen und neu erstellt."),
    ...                              Doc("2", "Der Index wird jede Nacht neu aufgebaut.")])
    >>> print(advice(app, "handbuch"))  # doctest: +NORMALIZE_WHITESPACE
    Most of these documents are in German (2 of 2); the multilingual model
    (use-multilingual-v3) finds them across languages. Re-embed with it: searchapp models
    use --corpus handbuch --model use-multilingual-v3 (or the Models page: Use a model for a
    corpus).
"""

from __future__ import annotations

import shlex

from searchapp.context import App
from searchapp.corpora.service import create_corpus  # noqa: F401 - used in the doctest
from searchapp.embedding.model_languages import MULTILINGUAL, reads
from searchapp.store import repo

SHARE = 0.5  # at least this share of the documents in other languages than English
NOT_TOLD = ("en", "und")  # English, and texts too short to tell, never ask for a switch
NAMES = {"ar": "Arabic", "de": "German", "en": "English", "es": "Spanish", "fr": "French",
         "it": "Italian", "ja": "Japanese", "ko": "Korean", "nl": "Dutch", "pl": "Polish",
         "pt": "Portuguese", "ru": "Russian", "th": "Thai", "tr": "Turkish", "zh": "Chinese",
         "zh-TW": "Chinese"}
VALUES_READ = 200  # distinct ``lang`` values counted


def language_name(code: str) -> str:
    """The English name of an ISO 639-1 code (the code itself when unknown here).

    Example:
        >>> language_name("de"), language_name("de-CH"), language_name("xx")
        ('German', 'German', 'xx')
    """
    return NAMES.get(code) or NAMES.get(code.split("-")[0].lower()) or code


def advice(app: App, corpus: str) -> str | None:
    """The sentence proposing the multilingual model for ``corpus``, or None when its model
    suits its languages (see the module docstring). CorpusNotFoundError for no such corpus.

    Example:
        >>> advice(app, "handbuch").startswith("Most of these")  # doctest: +SKIP
        True
    """
    with app.db.session() as s:
        state = repo.corpus_state(s, corpus)
        counts = repo.top_values(s, state.id, "lang", VALUES_READ)
    other = [(code, n) for code, n in counts if code.split("-")[0].lower() not in NOT_TOLD]
    total = state.documents
    if not other or total == 0 or sum(n for _, n in other) < SHARE * total:
        return None
    main = other[0][0]
    if reads(state.model_name, app.settings, main) or \
            not reads(MULTILINGUAL, app.settings, main) or state.model_name == MULTILINGUAL:
        return None
    return (f"Most of these documents are {_languages(other, total)}; the multilingual model "
            f"({MULTILINGUAL}) finds them across languages. Re-embed with it: "
            f"{switch_command(state.name)} (or the Models page: Use a model for a corpus).")


def switch_command(corpus: str) -> str:
    """The command that re-embeds ``corpus`` with the multilingual model and switches to it.

    Example:
        >>> switch_command("Handbücher 2024")
        "searchapp models use --corpus 'Handbücher 2024' --model use-multilingual-v3"
    """
    return f"searchapp models use --corpus {shlex.quote(corpus)} --model {MULTILINGUAL}"


def _languages(other: list[tuple[str, int]], total: int) -> str:
    """``in German (7 of 10)``, or ``in other languages than English (German 4, French 3
    of 10)`` when no one language holds the share alone."""
    code, n = other[0]
    if n >= SHARE * total:
        return f"in {language_name(code)} ({n:,} of {total:,})"
    listed = ", ".join(f"{language_name(c)} {k:,}" for c, k in other[:4])
    return f"in other languages than English ({listed} of {total:,})"
