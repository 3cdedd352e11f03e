"""How text is cut into search words, for every script: the one rule both the stored
documents and the queries go through.

Spaced scripts (Latin, Cyrillic, Greek, Arabic, ...) keep the cut the full-text index
always made: runs of letters and digits, case folded by the index (SQLite's unicode61,
which also folds accents: ``cafe`` finds ``café``). Plain ASCII text is returned as it
is, so English indexes exactly as before.

Unspaced scripts (Han, Hiragana, Katakana and Hangul, as Lucene's CJK analyzer takes
them; Thai, Lao, Khmer, Myanmar) have no spaces between words, so a run of them would
be one "word" and a word inside a sentence never found. A run becomes its overlapping
character bigrams instead (``東京都に`` → ``東京 京都 都に``), plus its last character
alone (``に``): then any word of two or more characters inside a run is the phrase of
its consecutive bigrams, and every character of a run starts some token, so a
one-character query is a prefix query (``"京" *``) that finds every text holding that
character (a unigram per character would find the same, but doubles the index and
ranks poorly). Combining marks inside those runs (Thai vowels and tones, Myanmar
signs) are dropped on both sides: the index would cut a word at each of them.

Width variants are folded first (Unicode NFKC: ``ＡＢＣ`` → ``ABC``, half-width
``ｶﾀｶﾅ`` → ``カタカナ``), on both sides too.

Why Python and not an FTS5 tokenizer: SQLite's Python binding cannot register one.
``search_text`` rewrites a document's text into the words the index is then given
(the index's own unicode61 cut finds exactly those tokens), and ``query_tokens``
rewrites a query's chunk the same way.

Example:
    >>> search_text("東京都に住む")
    ' 東京 京都 都に に住 住む む '
    >>> query_tokens("京都")
    (['京都'], False)
    >>> query_tokens("京")
    (['京'], True)
    >>> search_text("The café")
    'The café'
"""

from __future__ import annotations

import re
import unicodedata

# the unspaced scripts, by block; one run never mixes two groups
_GROUPS = {
    "cjk": ("\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3041-\u3096"
            "\u3099\u309a\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff"
            "\u3105-\u312f\u3131-\u318e\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
            "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\U00020000-\U0003134f"),
    "thai": "\u0e01-\u0e3a\u0e40-\u0e4e",
    "lao": "\u0e81-\u0ece",
    "khmer": "\u1780-\u17d3\u17dc\u17dd",
    "myanmar": "\u1000-\u1049\u1050-\u109d",
}
RUN = re.compile("|".join(f"[{chars}]+" for chars in _GROUPS.values()))
WORD = re.compile(r"\w+", re.UNICODE)  # a spaced script's words (the query side's cut)


def fold(text: str) -> str:
    """Width and compatibility variants folded (NFKC); ASCII text is returned as it is.

    Example:
        >>> fold("ＡＢＣ ｶﾀｶﾅ café")
        'ABC カタカナ café'
    """
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


def _base(run: str) -> str:
    """A run without its combining marks (the index would cut a word at each)."""
    return "".join(c for c in run if not unicodedata.category(c).startswith("M"))


def bigrams(run: str, closed: bool = True) -> list[str]:
    """The tokens of one unspaced run: overlapping bigrams, then (``closed``: the run ends
    there) its last character alone.

    Example:
        >>> bigrams("東京都"), bigrams("東京都", closed=False), bigrams("都")
        (['東京', '京都', '都'], ['東京', '京都'], ['都'])
    """
    chars = _base(run)
    pairs = [chars[i:i + 2] for i in range(len(chars) - 1)]
    return [*pairs, chars[-1:]] if (closed or len(chars) == 1) and chars else pairs


def search_text(text: str) -> str:
    """A document's text as the full-text index is to read it (see the module's docstring):
    folded, each unspaced run replaced by its bigrams.

    Example:
        >>> search_text("ＡＢＣ東京")
        'ABC 東京 京 '
    """
    text = fold(text)
    if text.isascii():
        return text
    return RUN.sub(lambda m: " " + " ".join(bigrams(m.group())) + " ", text)


def has_unspaced(text: str) -> bool:
    """Whether ``text`` holds a character of an unspaced script (once folded: half-width
    katakana are katakana).

    Example:
        >>> has_unspaced("abc"), has_unspaced("abc東"), has_unspaced("ｶﾀ")
        (False, True, True)
    """
    return not text.isascii() and RUN.search(fold(text)) is not None


def spaced_only(text: str) -> str:
    """``text`` (folded when it holds an unspaced run) with its unspaced runs replaced by a
    space: the words a spelling can correct.

    Example:
        >>> spaced_only("grep は文字列を探す"), spaced_only("ｶﾀｶﾅ ok")
        ('grep  ', '  ok')
    """
    return RUN.sub(" ", fold(text)) if has_unspaced(text) else text


def query_tokens(chunk: str, skip: frozenset[str] = frozenset()) -> tuple[list[str], bool]:
    """A query chunk (no whitespace) as the tokens of one phrase, lower-cased, and whether
    its last token is a prefix (a one-character run at the end: every text holding that
    character has a token starting with it). Words in ``skip`` (common words) are left out.

    A run inside the chunk ends where the document's run ends too, so it gets its closing
    character; the chunk's last run does not (the document's run may go on).

    Example:
        >>> query_tokens("ERR-40417")
        (['err', '40417'], False)
        >>> query_tokens("東京abc")
        (['東京', '京', 'abc'], False)
        >>> query_tokens("東京都")
        (['東京', '京都'], False)
    """
    low = fold(chunk).lower()
    if low.isascii():
        return [w for w in WORD.findall(low) if w not in skip], False
    pieces: list[tuple[bool, str]] = []
    last = 0
    for m in RUN.finditer(low):
        pieces += [(False, w) for w in WORD.findall(low[last:m.start()]) if w not in skip]
        if _base(m.group()):
            pieces.append((True, _base(m.group())))
        last = m.end()
    pieces += [(False, w) for w in WORD.findall(low[last:]) if w not in skip]
    tokens: list[str] = []
    for i, (is_run, piece) in enumerate(pieces):
        tokens += bigrams(piece, closed=i < len(pieces) - 1) if is_run else [piece]
    prefix = bool(pieces) and pieces[-1][0] and len(pieces[-1][1]) == 1
    return tokens, prefix


def query_words(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """The words of a query a snippet marks, lower-cased: spaced words as the index cuts
    them, each unspaced run whole (marked wherever it stands inside a longer run).

    Example:
        >>> query_words("東京 XR-7 ｶﾀｶﾅ")
        ['東京', 'xr', '7', 'カタカナ']
    """
    low = fold(text).lower()
    out: list[str] = []
    last = 0
    for m in RUN.finditer(low):
        out += [w for w in WORD.findall(low[last:m.start()]) if w not in skip]
        out += [m.group()] if _base(m.group()) else []  # combining marks alone: no word
        last = m.end()
    return out + [w for w in WORD.findall(low[last:]) if w not in skip]
