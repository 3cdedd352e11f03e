"""A query's words as a multilingual corpus' other languages write them: the words side of
cross-lingual hybrid search.

The words side of hybrid search (BM25) finds the words a query types, so an English query
finds a German page by its words only where English words were left in it ("pg_dump"), and
the fusion then rests on the meaning side alone. A multilingual model puts a word and its
translations near each other (the bundled USE was trained on translated pairs), so the
corpus' own vocabulary (``store/vocabulary.py``), embedded by the corpus' model, is a
dictionary between the corpus' languages: each word of the query is looked up in it, and its
nearest vocabulary words (up to ``TOP``, cosine at least ``MIN_COSINE``) are searched too,
OR-ed with the words typed. "list directory contents" searches ``verzeichnis``, ``inhalt``,
``auflisten`` on a German corpus; "Verzeichnisinhalte auflisten" finds ``directory`` and
``list`` on an English one; the same lookup finds a word's other forms in its own language.

Measured with ``benchmarks/languages.py`` (Debian's translated manual pages; docs/search.md):
the multilingual hybrid's MRR@10 rises across languages (es→en, fr→en, de→en by about
0.05) and stays within its interval within one language. Only corpora whose model reads
several languages (``model_languages``) are affected: an English corpus on the bundled
all-MiniLM-L6-v2 searches exactly as before, and so does lexical mode (the words as typed).
Words of unspaced scripts are not looked up (their index tokens are character pairs, not
words), nor are words with digits or marks (codes and names are searched as typed).

The search also tells whether the query is written in a language of the corpus (one a
tenth of its documents at least are in, by their detected ``lang``): written in that
language's script and, for a spaced script, told to be in it among the corpus' and the
model's languages (``language.likeliest``). Where the corpus' languages are not known,
most of the query's words in the table (for Japanese and Chinese, most of its character
pairs in the corpus' index) decide. The fusion then weighs words more
(``fusion.SAME_LANGUAGE_WEIGHT``), since within a language BM25 is as strong as this
encoder; across languages meaning keeps its weight.

The table holds the ``MAX_WORDS`` most frequent words of at least ``MIN_LENGTH`` letters
(20,000 × 512 float32: 41 MB), made on the corpus' first hybrid search (about 3 s for
20,000 words on 2 cores) and kept in the App's memo; a new generation re-embeds only its
new words. ``SEARCHAPP_TRANSLATE_WORDS=0`` turns the lookup off.

Example:
    >>> table = WordTable.build([("verzeichnis", 9), ("datei", 5)], enc.encode)  # doctest: +SKIP
    >>> table.translations(["directory"], enc.encode)                    # doctest: +SKIP
    ['verzeichnis']
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from searchapp.base.language import likeliest
from searchapp.base.scripts import script_of_language, script_of_text
from searchapp.base.words import fold, has_unspaced, query_tokens
from searchapp.context import App
from searchapp.embedding.model_languages import model_languages
from searchapp.search.corpus_languages import corpus_languages
from searchapp.store import fulltext, vocabulary
from searchapp.vectors.handle import CorpusHandle

TOP = 3  # vocabulary words searched per query word, at most
MIN_COSINE = 0.6  # ...each at least this near (languages.py: a flat optimum from 0.5 to 0.7)
MAX_WORDS = 20_000  # the most frequent words of the corpus that can be found so
MIN_LENGTH = 3  # shorter words are not in the table (articles, particles, abbreviations)
COMMON_SHARE = 0.2  # a word in more of the documents is a function word: never added...
COMMON_MIN_DOCUMENTS = 20  # ...in a corpus of this many documents at least (fewer: no telling)
MEMO_KEY = "word table"
MEMO_WORDS = 10_000  # query words whose neighbours a table keeps
KNOWN_SHARE = 0.5  # this share of the query's words in the table: written in the corpus' language
MAX_PAIRS = 16  # character pairs of an unspaced query looked up in the corpus' index, at most
SCRIPT_SHARE = 0.1  # a language of this share of the corpus' documents is one of its languages

Encode = Callable[[Sequence[str]], np.ndarray]  # texts -> L2-normalised vectors (n, d)


@dataclass(frozen=True)
class WordTable:
    """The corpus' words and their vectors (one row each, L2-normalised, (n, d) float32)."""

    words: tuple[str, ...]
    vectors: np.ndarray
    rows: dict[str, int]
    memo: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)  # word ->
    # its neighbours (``_neighbours``), oldest first; written under ``lock`` (searches share it)
    lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @classmethod
    def build(cls, counts: Sequence[tuple[str, int]], encode: Encode,
              previous: WordTable | None = None, documents: int = 0) -> WordTable:
        """The table of ``counts`` (word, documents holding it): its ``MAX_WORDS`` most
        frequent words, function words (in more than ``COMMON_SHARE`` of ``documents``, from
        ``COMMON_MIN_DOCUMENTS``) left out; vectors of words ``previous`` holds are taken
        from it, the rest encoded."""
        common = COMMON_SHARE * documents if documents >= COMMON_MIN_DOCUMENTS else float("inf")
        kept = sorted(((w, n) for w, n in counts if len(w) >= MIN_LENGTH and n <= common),
                      key=lambda wn: (-wn[1], wn[0]))[:MAX_WORDS]
        words = tuple(w for w, _ in kept)
        vectors = np.empty((len(words), 0), dtype=np.float32)
        known = previous.rows if previous is not None else {}
        new = [w for w in words if w not in known]
        fresh = dict(zip(new, encode(new), strict=True)) if new else {}
        if words:
            vectors = np.stack([fresh[w] if w in fresh else previous.vectors[known[w]]
                                for w in words]).astype(np.float32)
        return cls(words, vectors, {w: i for i, w in enumerate(words)})

    def translations(self, query_words: Sequence[str], encode: Encode) -> list[str]:
        """Words of the table near each of ``query_words`` (``TOP`` each at most, cosine at
        least ``MIN_COSINE``), nearest first per word; never a query word itself (accents
        folded) nor a word twice. Each word's neighbours are kept (``MEMO_WORDS`` of them):
        a word searched again costs a dictionary lookup, not an encoding and a scan.

        Example:
            >>> table.translations(["directory", "contents"], encoder.encode)  # doctest: +SKIP
            ['verzeichnis', 'inhalt']
        """
        if not query_words or not self.words:
            return []
        typed = {fold(w) for w in query_words}
        out: list[str] = []
        for near in self._neighbours(list(dict.fromkeys(query_words)), encode):
            found = [w for w in near if fold(w) not in typed]
            out.extend(w for w in found[:TOP] if w not in out)
        return out

    def _neighbours(self, query_words: list[str], encode: Encode) -> list[tuple[str, ...]]:
        """Each word's nearest table words at ``MIN_COSINE`` or more, ``TOP`` + 1 at most
        (one more: the word itself may be among them), from the memo or computed."""
        todo = [w for w in query_words if w not in self.memo]
        if todo:
            missing = [w for w in todo if w not in self.rows]
            encoded = dict(zip(missing, encode(missing), strict=True)) if missing else {}
            queries = np.stack([encoded[w] if w in encoded else self.vectors[self.rows[w]]
                                for w in todo])
            sims = queries @ self.vectors.T  # (words, table words)
            reach = min(TOP + 1, len(self.words))
            for word, row in zip(todo, sims, strict=True):
                best = np.argpartition(-row, reach - 1)[:reach]
                best = best[np.argsort(-row[best])]
                near = tuple(self.words[i] for i in best if row[i] >= MIN_COSINE)
                with self.lock:
                    if len(self.memo) >= MEMO_WORDS:
                        self.memo.pop(next(iter(self.memo)))
                    self.memo[word] = near
        return [self.memo[w] for w in query_words]


def lookup_words(query: str) -> list[str]:
    """The query's words that are looked up: letters only, two or more, not an English
    function word, not of an unspaced script.

    Example:
        >>> lookup_words("list the directory contents of pg_dump 2 東京")
        ['list', 'directory', 'contents']
    """
    return [w for w in fulltext.query_words(query)
            if len(w) >= 2 and w.isalpha() and not has_unspaced(w)
            and w not in _marked(query)]


def _marked(query: str) -> set[str]:
    """Words that stand inside a code or name of the query (``pg_dump``: ``pg``, ``dump``)."""
    return {part for token in query.split() if not token.strip(".,;:!?\"'()").isalpha()
            for part in fulltext.query_words(token)}


def multilingual(app: App, model: str) -> bool:
    """Whether ``model`` reads more than one language (its ``config.json`` says so)."""
    return len(model_languages(model, app.settings)) > 1


def table_for(app: App, handle: CorpusHandle) -> WordTable:
    """The corpus' word table at its generation (the App's memo; a newer generation starts
    from the latest table kept, re-embedding only its new words)."""
    key = (MEMO_KEY, handle.model.name)
    found = app.memo.get(handle.corpus_id, handle.generation, key)
    if found is not None:
        return found
    latest = app.memo.latest(handle.corpus_id, key)
    with app.db.reader() as conn:
        counts = vocabulary.words(conn, handle.corpus_id)
    encoder = app.encoder(handle.model.name)
    table = WordTable.build(counts, encoder.encode, latest[1] if latest else None,
                            handle.documents)
    app.memo.put(handle.corpus_id, handle.generation, key, table)
    return table


@dataclass(frozen=True)
class WordsSide:
    """What the words side of one hybrid search looks for.

    ``text``: the query and its words' translations in the corpus. ``in_corpus_language``:
    whether most of the words looked up are the corpus' own words (the query is written in
    a language of the corpus): True, False, or None where nothing was looked up (an English
    model, no plain word, or the lookup off)."""

    text: str
    in_corpus_language: bool | None = None


def words_side(app: App, handle: CorpusHandle, query: str) -> WordsSide:
    """The words side of a hybrid search for ``query``: on a corpus of a multilingual model,
    its words' translations in the corpus (``WordTable.translations``) added, and whether
    the query is in the corpus' language: in the script of one of its major languages (of
    ``SCRIPT_SHARE`` of its documents) and told to be in one of them; for Japanese and
    Chinese, or where the corpus' languages are not known, ``KNOWN_SHARE`` at least of its
    plain words in the table and its character pairs (``character_pairs``) in its index.

    Example:
        >>> words_side(app, handle, "list directory contents")               # doctest: +SKIP
        WordsSide(text='list directory contents auflisten verzeichnis inhalt',
                  in_corpus_language=False)
    """
    if not app.settings.translate_words or not multilingual(app, handle.model.name):
        return WordsSide(query)
    looked_up, pairs = lookup_words(query), character_pairs(query)
    if not looked_up and not pairs:
        return WordsSide(query)
    added, known = [], 0
    if looked_up:
        table = table_for(app, handle)
        added = table.translations(looked_up, app.encoder(handle.model.name).encode)
        known = sum(w in table.rows for w in looked_up)
    text = " ".join([query, *added]) if added else query
    languages = corpus_languages(app, handle)
    if languages is not None and not _in_script(query, languages):
        return WordsSide(text, False)  # Latin words in Japanese pages: code, leftovers
    if languages is not None and not pairs:
        return WordsSide(text, _told_in(app, handle, query, languages))
    if pairs:  # Japanese, Chinese: the corpus' index holds most of its character pairs
        with app.db.reader() as conn:
            known += sum(fulltext.count_matches(conn, handle.corpus_id, p, 1) > 0 for p in pairs)
    return WordsSide(text, known >= KNOWN_SHARE * (len(looked_up) + len(pairs)))


def _major(languages: dict[str, float]) -> set[str]:
    """The corpus' languages of ``SCRIPT_SHARE`` of its documents at least."""
    return {code for code, share in languages.items() if share >= SCRIPT_SHARE}


def _in_script(query: str, languages: dict[str, float]) -> bool:
    """Whether ``query`` is written in the script of one of the corpus' major languages."""
    return script_of_text(query) in {script_of_language(code) for code in _major(languages)}


def _told_in(app: App, handle: CorpusHandle, query: str, languages: dict[str, float]) -> bool:
    """Whether a query of a spaced script is told (``language.likeliest``, among the corpus'
    languages and its model's) to be in one of the corpus' major languages: English words
    left in German pages do not make an English query German."""
    among = set(languages) | set(model_languages(handle.model.name, app.settings))
    told = likeliest(query, among)
    return told is None or told in _major(languages)


def character_pairs(query: str) -> list[str]:
    """The character pairs of the query's runs of unspaced scripts, each once, at most
    ``MAX_PAIRS``: what tells whether a Japanese or Chinese query is in the corpus' language
    (the corpus' index holds them), as its words do for a spaced script.

    Example:
        >>> character_pairs("東京都 list 東京")
        ['東京', '京都']
    """
    out = [t for chunk in query.split() for t in query_tokens(chunk)[0]
           if len(t) == 2 and has_unspaced(t)]
    return list(dict.fromkeys(out))[:MAX_PAIRS]
