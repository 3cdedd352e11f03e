"""The language of a text: ``searchapp.base.language`` under the name intake's callers use.

The detector moved to ``base/`` so that ``corpora/`` (below intake) tells the language of
documents upserted by id the same way; this module keeps the old import path working.

Example:
    >>> detect("Die Datei wird gelesen und der Index wird neu erstellt.")[0]
    'de'
"""

from __future__ import annotations

from searchapp.base.language import (  # noqa: F401 - re-exported
    LANGUAGES,
    MAX_PARTS,
    MIN_CONFIDENCE,
    MIN_LETTERS,
    SAMPLE_CHARS,
    UNDETERMINED,
    detect,
    document_languages,
    has_language,
    sample,
)
