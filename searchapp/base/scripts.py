"""Which writing system a text is written in, and which one a language is written in.

A query written in Latin letters is not in the language of a Japanese corpus, even where the
Japanese documents carry English words (command names, untranslated paragraphs): the script
tells that where a word count cannot (``search.translated_words``). Scripts are named by the
first word of a letter's Unicode name, with Han, hiragana and katakana as one ``CJK``.

Example:
    >>> script_of_text("ディレクトリの内容"), script_of_text("list pg_dump"), script_of_text("42")
    ('CJK', 'LATIN', None)
    >>> script_of_language("ja"), script_of_language("ru"), script_of_language("de")
    ('CJK', 'CYRILLIC', 'LATIN')
"""

from __future__ import annotations

import unicodedata
from collections import Counter

_JOINED = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "HALFWIDTH": "CJK", "IDEOGRAPHIC": "CJK"}
# ISO 639-1 codes of languages not written in Latin letters (the rest are)
_LANGUAGE_SCRIPTS = {
    "ja": "CJK", "zh": "CJK", "ko": "HANGUL", "th": "THAI", "lo": "LAO", "km": "KHMER",
    "my": "MYANMAR", "ru": "CYRILLIC", "uk": "CYRILLIC", "bg": "CYRILLIC", "be": "CYRILLIC",
    "mk": "CYRILLIC", "sr": "CYRILLIC", "kk": "CYRILLIC", "mn": "CYRILLIC", "ar": "ARABIC",
    "fa": "ARABIC", "ur": "ARABIC", "ps": "ARABIC", "he": "HEBREW", "yi": "HEBREW",
    "el": "GREEK", "hi": "DEVANAGARI", "mr": "DEVANAGARI", "ne": "DEVANAGARI",
    "bn": "BENGALI", "ta": "TAMIL", "te": "TELUGU", "ka": "GEORGIAN", "hy": "ARMENIAN",
    "am": "ETHIOPIC", "gu": "GUJARATI", "kn": "KANNADA", "ml": "MALAYALAM", "pa": "GURMUKHI",
    "si": "SINHALA",
}


def script_of_letter(ch: str) -> str | None:
    """The script of one character, None for a character that is not a letter."""
    if not ch.isalpha():
        return None
    name = unicodedata.name(ch, "")
    first = name.split(" ", 1)[0] if name else ""
    if first == "CJK" or name.startswith(("CJK ", "FULLWIDTH LATIN")):
        return "CJK" if first == "CJK" else "LATIN"
    return _JOINED.get(first, first or None)


def script_of_text(text: str) -> str | None:
    """The script most of the text's letters are in (None: no letter)."""
    counts = Counter(s for s in map(script_of_letter, text) if s)
    return counts.most_common(1)[0][0] if counts else None


def script_of_language(code: str) -> str:
    """The script a language (ISO 639-1, a region suffix allowed: ``zh-TW``) is written in."""
    return _LANGUAGE_SCRIPTS.get(code.split("-")[0].lower(), "LATIN")
