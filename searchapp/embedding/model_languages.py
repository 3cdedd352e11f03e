"""Which languages a model reads, and the words a page shows when a model is chosen.

A model folder may list the languages it was trained on in its ``config.json``
(``"languages": ["ar", "de", "en", ...]``, as the bundled multilingual USE does); a model
without that list is taken as English-only, which the bundled all-MiniLM-L6-v2 and the
models fine-tuned from it are (an English word-piece vocabulary). The app proposes the
multilingual model for a corpus mostly in other languages from this
(``corpora.language_advice``), and the Upload page labels its models with ``label``.

Example:
    >>> from searchapp.config import Settings
    >>> model_languages("use-multilingual-v3", Settings.from_env({}))[:3]
    ('ar', 'de', 'en')
    >>> model_languages("all-MiniLM-L6-v2", Settings.from_env({}))
    ('en',)
"""

from __future__ import annotations

import json

from searchapp.config import Settings
from searchapp.embedding.models import model_path

MULTILINGUAL = "use-multilingual-v3"  # the bundled model the app proposes for other languages
LABELS = {"all-MiniLM-L6-v2": "English",
          MULTILINGUAL: "multilingual: 16 languages, cross-lingual search"}


def model_languages(name: str, settings: Settings) -> tuple[str, ...]:
    """The ISO 639-1 codes of the languages model ``name`` reads (``("en",)`` when its
    ``config.json`` lists none, or cannot be read); ModelError for an unknown model.

    Example:
        >>> "ja" in model_languages(MULTILINGUAL, Settings.from_env({}))
        True
    """
    try:
        config = json.loads((model_path(name, settings) / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return ("en",)
    listed = config.get("languages") if isinstance(config, dict) else None
    if not isinstance(listed, list) or not listed:
        return ("en",)
    return tuple(str(code) for code in listed)


def reads(name: str, settings: Settings, language: str) -> bool:
    """Whether model ``name`` reads ``language`` (an ISO 639-1 code; ``de-CH`` counts as
    ``de``).

    Example:
        >>> reads("all-MiniLM-L6-v2", Settings.from_env({}), "de")
        False
    """
    codes = model_languages(name, settings)
    return language in codes or language.split("-")[0].lower() in codes


def label(name: str, default: str = "") -> str:
    """``name`` as a page offers it: with what it reads, and "(the default)" for ``default``.

    Example:
        >>> label("use-multilingual-v3")
        'use-multilingual-v3 (multilingual: 16 languages, cross-lingual search)'
        >>> label("all-MiniLM-L6-v2", "all-MiniLM-L6-v2")
        'all-MiniLM-L6-v2 (English, the default)'
        >>> label("support-v1")
        'support-v1'
    """
    words = [w for w in (LABELS.get(name, ""), "the default" if name == default else "") if w]
    return f"{name} ({', '.join(words)})" if words else name
