"""The language of a text, and of a document part by part: ISO 639-1 codes from py3langid.

``detect(text)`` says which language a text is in and how sure it is: ``("de", 0.99)``.
It reads a bounded sample (``SAMPLE_CHARS``: the start, middle and end of a long text), so
a 5 MB manual costs what 2,000 characters cost (about 0.3 ms once the model is loaded; the
model loads once per process, about 0.4 s). A text with too few letters to tell
(``MIN_LETTERS``), or one the model is not sure of (``MIN_CONFIDENCE``), is ``"und"``
(undetermined, as BCP 47 writes it) rather than a wrong guess: "Hello world" or
"git commit -m" are not evidence of a language.

The model is py3langid's (BSD-3-Clause, shipped inside the wheel; naive Bayes over byte
n-grams, 140 labels). It is restricted to ``LANGUAGES``: the languages with an ISO 639-1
code whose written form the model tells apart reliably; labels that mostly catch
fragments of others on short text (Latin for code, Aragonese for Spanish, Volapük,
Walloon, ...) and the three-letter ones are left out, so their texts are told as the
nearest language kept, or "und".

``document_languages(text, layout)`` is a document's ``lang`` (the language most of its
text is in) and ``langs`` (every language present in a part of its own, main first, when
there is more than one): each layout part (a page, a section; for a document of one part,
its paragraphs) is detected on its own, weighted by its length, up to ``MAX_PARTS`` parts.
``has_language(meta)`` says whether a document names its own language (``lang`` or
``language``, any case), which every way in keeps rather than detecting one.

It lives in ``base/`` (no searchapp imports; py3langid loaded on first use) so every layer
that takes documents in tells their language the same way: files and table rows in
``intake/``, documents upserted by id in ``corpora/documents`` (the API, ``searchapp
documents upsert``, the Documents page). ``searchapp.intake.language`` is this module
under its old name.

Example:
    >>> detect("Die Datei wird gelesen und der Index wird neu erstellt.")[0]
    'de'
    >>> detect("Hello world")
    ('und', 0.0)
    >>> document_languages("The file is read and the index is rebuilt from scratch.\\n\\n"
    ...                    "Die Datei wird gelesen und der Index wird neu erstellt.", None)
    {'lang': 'en', 'langs': 'en,de'}
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence

UNDETERMINED = "und"
SAMPLE_CHARS = 2_000  # read of one text: its start, middle and end when longer
MIN_LETTERS = 12  # fewer letters (or CJK characters) than this: "und"
MIN_CONFIDENCE = 0.5  # the model's calibrated probability below which the answer is "und"
PART_CHARS = 600  # read of one part of a document
MIN_PART_LETTERS = 40  # a part shorter than this does not vote on its own
MAX_PARTS = 64  # parts read per document (evenly spread when it has more)
MIN_SHARE = 0.1  # a language is listed in ``langs`` when this share of the text is in it
PART_CONFIDENCE = 0.8  # and a part of it was told at least this surely

# ISO 639-1 codes kept from the model's 140 labels (see the module's docstring).
LANGUAGES = (
    "af", "am", "ar", "az", "be", "bg", "bn", "bs", "ca", "cs", "cy", "da", "de", "el", "en",
    "es", "et", "eu", "fa", "fi", "fr", "ga", "gl", "gu", "he", "hi", "hr", "hu", "hy", "id",
    "is", "it", "ja", "ka", "kk", "km", "kn", "ko", "ky", "lo", "lt", "lv", "mk", "ml", "mn",
    "mr", "ms", "my", "ne", "nl", "no", "pa", "pl", "ps", "pt", "ro", "ru", "si", "sk", "sl",
    "sq", "sr", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "uz", "vi", "zh",
)

_LETTER = re.compile(r"[^\W\d_]")
_PARAGRAPH = re.compile(r"\n\s*\n")
_lock = threading.Lock()
_identifier = None


def _model():
    """py3langid's identifier, loaded once per process and restricted to ``LANGUAGES``."""
    global _identifier
    with _lock:
        if _identifier is None:
            _identifier = _load_identifier()
        return _identifier


def _load_identifier():
    """py3langid's identifier read in memory. Its own loader decompresses the model into a
    temporary file: a process whose file-size limit or disk is at its end would fail there,
    before any document is stored (test_storage_failures)."""
    import io
    import lzma

    import numpy as np
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier
    from py3langid.modelio import _to_array

    with lzma.open(MODEL_DIR / MODEL_FILE) as src, np.load(io.BytesIO(src.read()),
                                               allow_pickle=False) as data:
        identifier = LanguageIdentifier(
            np.asarray(data["ptc"]), np.asarray(data["pc"]), data["classes"].tolist(),
            _to_array(data["nextmove"]), data["out_feat"].tolist(), norm_probs=True,
            tk_row=_to_array(data["nextmove_row"]))
    identifier.set_languages(LANGUAGES)
    return identifier


def sample(text: str, size: int = SAMPLE_CHARS) -> str:
    """At most ``size`` characters of ``text``: all of it, or its start, middle and end.

    Example:
        >>> sample("a" * 10 + "b" * 10 + "c" * 10, 9)
        'aaa\\nbbb\\nccc'
    """
    if len(text) <= size:
        return text
    third = size // 3
    middle = (len(text) - third) // 2
    return "\n".join((text[:third], text[middle:middle + third], text[-third:]))


def detect(text: str) -> tuple[str, float]:
    """``(code, confidence)``: the ISO 639-1 code of the language ``text`` is written in and
    the model's probability for it, or ``("und", p)`` when it cannot tell.

    Example:
        >>> detect("Le fichier est lu et l'index est reconstruit.")[0]
        'fr'
        >>> detect("12345 !!")
        ('und', 0.0)
    """
    piece = sample(text)
    if len(_LETTER.findall(piece, 0, len(piece))) < MIN_LETTERS:
        return UNDETERMINED, 0.0
    code, confidence = _model().classify(piece)
    if confidence < MIN_CONFIDENCE:
        return UNDETERMINED, confidence
    return code, confidence


def likeliest(text: str, among: Collection[str]) -> str | None:
    """The language of ``among`` (ISO 639-1 codes) the model finds likeliest for ``text``;
    None when ``text`` has no letter or no code of ``among`` is one the model tells.

    Unlike ``detect``, it answers for a few words: told among a corpus' languages and its
    model's, "list directory contents" is English and "copier des fichiers" French, where
    ``detect`` says "und" for want of letters.

    Example:
        >>> likeliest("list directory contents", ["de", "en", "fr"])
        'en'
        >>> likeliest("Verzeichnisinhalte auflisten", ["de", "en"])
        'de'
    """
    known = {c for c in among if c in LANGUAGES}
    if not known or not _LETTER.search(text):
        return None
    return next((code for code, _ in _model().rank(text) if code in known), None)


def document_languages(text: str, layout: Sequence[Sequence] | None) -> dict[str, str]:
    """A document's ``{"lang": main}``, with ``"langs": "main,other,..."`` when its parts
    are in more than one language. ``layout`` is the document's parts as
    ``[start, end, page, section]`` spans of ``text`` (None or one part: its paragraphs).

    Example:
        >>> document_languages("Guten Tag. Die Datei wird gelesen und neu erstellt.", None)
        {'lang': 'de'}
    """
    weights: dict[str, float] = defaultdict(float)
    sure: set[str] = set()
    for part in _parts(text, layout):
        code, confidence = detect(part[:PART_CHARS] if len(part) > PART_CHARS else part)
        if code == UNDETERMINED:
            continue
        weights[code] += len(part)
        if confidence >= PART_CONFIDENCE:
            sure.add(code)
    if not weights:
        return {"lang": detect(text)[0]}
    total = sum(weights.values())
    ranked = sorted(weights, key=weights.get, reverse=True)
    present = [ranked[0]] + [c for c in ranked[1:] if c in sure and weights[c] >= MIN_SHARE
                             * total]
    meta = {"lang": ranked[0]}
    if len(present) > 1:
        meta["langs"] = ",".join(present)
    return meta


def has_language(meta: Mapping) -> bool:
    """Whether a document's metadata names its own language (a ``lang`` or ``language`` key,
    any case), which is kept as it is rather than detected.

    Example:
        >>> has_language({"Language": "German"}), has_language({"topic": "x"})
        (True, False)
    """
    return any(isinstance(k, str) and k.strip().lower() in ("lang", "language") for k in meta)


def _parts(text: str, layout: Sequence[Sequence] | None) -> list[str]:
    """The document's parts long enough to vote, at most ``MAX_PARTS`` evenly spread."""
    spans = [(int(p[0]), int(p[1])) for p in layout or ()]
    if len(spans) > 1:
        parts = [text[start:end] for start, end in spans]
    else:
        parts = _PARAGRAPH.split(sample(text, SAMPLE_CHARS * 4))
    parts = [p for p in parts if len(_LETTER.findall(p, 0, PART_CHARS)) >= MIN_PART_LETTERS]
    if len(parts) > MAX_PARTS:
        step = len(parts) / MAX_PARTS
        parts = [parts[int(i * step)] for i in range(MAX_PARTS)]
    return parts
