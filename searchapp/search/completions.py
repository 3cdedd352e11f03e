"""A corpus' completions in memory: titles, headings and frequent phrases, by prefix.

Why in memory, extended incrementally, rather than a table kept by the document
writes: the store's writes stay as they are (nothing new in the transaction of
every upload, nothing for the other writers of ``documents`` to keep in step),
the schema gains no derived table to upgrade and back up, and a lookup is a
bisection in a sorted list plus a top-k over a numpy slice, well under a
millisecond, where a SQL range query must sort every match by weight (see
``benchmarks/suggestions_latency.py``). The cost: the first suggestion of a corpus
in a process reads it once (1M documents: see the benchmark's build time).

What it holds (``CompletionSource`` rows, ``store/completion_sources.py``):

- titles: the ``title`` metadata, else a file's name without its extension, else
  the document's first heading (kind ``title``);
- headings: every heading of the document's sections (kind ``heading``);
- phrases: word n-grams of 1-3 words of each title (or, for a row without one,
  its first line) and heading, not starting or ending with a common word, offered
  once at least ``MIN_PHRASE_DOCS`` documents hold them (kind ``phrase``).

Each completion's weight is its document frequency. A completion is found by a
prefix of its first word, and one of up to 3 words by a prefix of any later word
too ("port" finds "default port"). Matching is case- and accent-insensitive
(``search_history.fold``).

Kept current: ``catch_up`` reads the documents with ids above the last one seen
(ids only grow; a changed text is a new id) and the tombstones written after the
generation it was at, and subtracts what each removed document brought (each
document's contributions are kept, as 64-bit hashes, for that). Metadata edited
in place (a title changed without its text) makes no tombstone: the index is
rebuilt from scratch when its generation moved and it is older than
``REBUILD_SECONDS``.

Example:
    >>> index = CompletionIndex()
    >>> index.add([CompletionSource(1, "a/Default port.md", None, "", ("Setup",), True),
    ...            CompletionSource(2, "b.md", "Changing the default port", "", (), True)])
    >>> [(c.text, c.kind, c.count) for c in index.complete("port", 8)]
    [('port', 'phrase', 2), ('Default port', 'title', 2)]
    >>> [c.text for c in index.complete(fold("Déf"), 8)]
    ['Default', 'Default port']
"""

from __future__ import annotations

import bisect
import heapq
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from searchapp.store.changes import removed_since
from searchapp.store.completion_sources import CompletionSource, sources_after
from searchapp.store.fulltext import STOPWORDS
from searchapp.store.search_history import fold

TITLE, HEADING, PHRASE = 0, 1, 2
KINDS = ("title", "heading", "phrase")
MIN_PHRASE_DOCS = 2  # a phrase found in fewer documents is not offered
MAX_PHRASE_WORDS = 3
PHRASE_SOURCE_WORDS = 12  # words of a title or first line cut into phrases
MAX_TEXT = 120  # characters of a title or heading offered
DELTA_MAX = 20_000  # entries kept aside before they are merged into the sorted list
REBUILD_SECONDS = 600.0
WORD = re.compile(r"\w+", re.UNICODE)
SEGMENT = re.compile(r"[.,;:!?()\[\]{}|\"“”«»]+|\s[-–—]\s")
TOP = "\U0010ffff"  # sorts after every character: the end of a prefix's range


@dataclass(frozen=True)
class Completion:
    """One completion: its text as written, its kind and how many documents hold it."""

    text: str
    kind: str
    count: int


class CompletionIndex:
    """Completions of one corpus; ``catch_up`` brings it to the store, ``complete`` answers.

    Thread-safe: one lock around every change and lookup (a lookup takes microseconds).
    """

    def __init__(self, corpus_id: int = 0):
        self.corpus_id = corpus_id
        self.generation = -1  # the generation it was last brought to (-1: never)
        self.last_id = 0  # the highest document id read
        self.built_at = time.monotonic()
        self.lock = threading.RLock()
        self._hashes = np.zeros(0, np.int64)  # sorted: every text seen, by hash
        self._counts = np.zeros((0, 3), np.int32)  # documents holding it, per kind
        self._key_of: dict[int, int] = {}  # hash -> key of the texts ever offered
        self._texts: list[str] = []  # per key: as written
        self._hash_of: list[int] = []
        self._score = np.zeros(0, np.int32)  # per key: its weight, 0 while not offered
        self._kind = np.zeros(0, np.int8)
        self._entries: list[str] = []  # sorted folded texts (and later-word suffixes)
        self._entry_keys = np.zeros(0, np.int32)
        self._delta: list[tuple[str, int]] = []  # sorted, not merged yet
        self._contributions: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        self._fold_cache: dict[str, str] = {}

    def __len__(self) -> int:
        return int(np.count_nonzero(self._score))

    # ---- keeping it current -------------------------------------------------------------
    def catch_up(self, s, generation: int) -> None:
        """Read what changed in the store since this index's generation (all of it at first).

        Example:
            >>> index.catch_up(session, 7)                      # doctest: +SKIP
        """
        with self.lock:
            if generation == self.generation:
                return
            if self.generation >= 0:
                self.remove(removed_since(s, self.corpus_id, self.generation).tolist())
            for chunk in sources_after(s, self.corpus_id, self.last_id):
                self.add(chunk)
            self.generation = generation

    @property
    def stale(self) -> bool:
        """Old enough to be rebuilt once its corpus changes (metadata edits leave no trace)."""
        return time.monotonic() - self.built_at > REBUILD_SECONDS

    def add(self, sources: Iterable[CompletionSource]) -> None:
        """Count the completions of these new documents (ids above every one seen)."""
        with self.lock:
            texts: dict[int, str] = {}
            doc_ids, starts, hashes, kinds = [], [], [], []
            for src in sources:
                doc_ids.append(src.id)
                starts.append(len(hashes))
                for kind, folded, text in self._contributions_of(src):
                    h = hash(folded)
                    if kind != PHRASE or h not in texts:  # a title's own spelling first
                        texts[h] = text
                    hashes.append(h)
                    kinds.append(kind)
                self.last_id = max(self.last_id, src.id)
            if not doc_ids:
                return
            h_arr, k_arr = np.asarray(hashes, np.int64), np.asarray(kinds, np.int8)
            self._contributions.append((np.asarray(doc_ids, np.int64),
                                        np.asarray(starts, np.int64), h_arr, k_arr))
            self._count(h_arr, k_arr, +1)
            self._offer(np.unique(h_arr), texts)

    def remove(self, doc_ids: list[int]) -> None:
        """Subtract what these removed documents brought (unknown ids: nothing)."""
        if not doc_ids:
            return
        gone = np.asarray(doc_ids, np.int64)
        with self.lock:
            kept = []
            for docs, starts, hashes, kinds in self._contributions:
                hit = np.isin(docs, gone)
                if not hit.any():
                    kept.append((docs, starts, hashes, kinds))
                    continue
                owner = np.repeat(np.arange(len(docs)), np.diff(np.append(starts, len(hashes))))
                mask = hit[owner]
                self._count(hashes[mask], kinds[mask], -1)
                self._rescore(np.unique(hashes[mask]))
                left = np.cumsum(~hit) - 1
                sizes = np.bincount(left[owner[~mask]], minlength=int((~hit).sum()))
                kept.append((docs[~hit], np.concatenate([[0], np.cumsum(sizes)[:-1]]),
                             hashes[~mask], kinds[~mask]))
            self._contributions = [c for c in kept if len(c[0])]

    def _contributions_of(self, src: CompletionSource) -> set[tuple[int, str, str]]:
        """(kind, folded text, text) of one document, each once."""
        title = _title(src)
        out: set[tuple[int, str, str]] = set()
        if title:
            out.add((TITLE, fold(title), title))
        for heading in src.headings:
            out.add((HEADING, fold(heading[:MAX_TEXT]), heading[:MAX_TEXT]))
        for text in (title or src.first_line, *src.headings):
            out.update((PHRASE, folded, shown) for folded, shown in self._phrases(text))
        return out

    def _phrases(self, text: str) -> Iterable[tuple[str, str]]:
        """Word n-grams (1-3 words) of ``text``'s first words, within punctuation, not
        starting or ending with a common word: (folded, as written)."""
        budget = PHRASE_SOURCE_WORDS
        for segment in SEGMENT.split(text):
            shown = WORD.findall(segment)[:budget]
            words = [self._fold_word(w) for w in shown]
            budget -= len(words)
            for i, first in enumerate(words):
                if first in STOPWORDS:
                    continue
                for n in range(1, min(MAX_PHRASE_WORDS, len(words) - i) + 1):
                    last = words[i + n - 1]
                    if last not in STOPWORDS and (n > 1 or _word_worth_offering(first)):
                        yield " ".join(words[i:i + n]), " ".join(shown[i:i + n])
            if budget <= 0:
                return

    def _fold_word(self, word: str) -> str:
        folded = self._fold_cache.get(word)
        if folded is None:
            folded = fold(word)
            if len(self._fold_cache) < 500_000:
                self._fold_cache[word] = folded
        return folded

    def _count(self, hashes: np.ndarray, kinds: np.ndarray, sign: int) -> None:
        """Add ``sign`` to the count of each (hash, kind); new hashes join the sorted array."""
        if not len(hashes):
            return
        uniq, inverse = np.unique(hashes, return_inverse=True)
        delta = np.zeros((len(uniq), 3), np.int32)
        np.add.at(delta, (inverse, kinds.astype(np.intp)), sign)
        pos = np.searchsorted(self._hashes, uniq)
        found = (pos < len(self._hashes)) & (self._hashes[np.minimum(pos, len(self._hashes) - 1)]
                                            == uniq) if len(self._hashes) else np.zeros(
            len(uniq), bool)
        self._counts[pos[found]] += delta[found]
        if (~found).any():
            merged = np.concatenate([self._hashes, uniq[~found]])
            order = np.argsort(merged, kind="stable")
            self._hashes = merged[order]
            self._counts = np.concatenate([self._counts, delta[~found]])[order]

    def _offer(self, hashes: np.ndarray, texts: dict[int, str]) -> None:
        """Give a key (and sorted entries) to each text now worth offering; rescore all."""
        fresh = []
        for h in hashes.tolist():
            if h not in self._key_of and texts.get(h) is not None:
                fresh.append(h)
        if fresh:
            rows = self._counts[np.searchsorted(self._hashes, np.asarray(fresh, np.int64))]
            for h, offered in zip(fresh, _weights(rows)[0] > 0, strict=True):
                if offered:
                    self._new_key(h, texts[h])
            self._merge_delta(force=False)
        self._rescore(hashes)

    def _new_key(self, h: int, text: str) -> None:
        key = len(self._texts)
        self._key_of[h] = key
        self._texts.append(text)
        self._hash_of.append(h)
        folded = fold(text)
        self._delta.append((folded, key))
        starts = [m.start() for m in WORD.finditer(folded)]
        if 1 < len(starts) <= MAX_PHRASE_WORDS:
            self._delta.extend((folded[at:], key) for at in starts[1:])

    def _rescore(self, hashes: np.ndarray) -> None:
        """Recompute the weight and kind of these texts' keys from their counts."""
        keys = [self._key_of[h] for h in hashes.tolist() if h in self._key_of]
        if len(self._score) < len(self._texts):
            grow = len(self._texts) - len(self._score)
            self._score = np.concatenate([self._score, np.zeros(grow, np.int32)])
            self._kind = np.concatenate([self._kind, np.zeros(grow, np.int8)])
        if not keys:
            return
        key_arr = np.asarray(keys, np.int64)
        own = np.asarray([self._hash_of[k] for k in keys], np.int64)
        weight, kind = _weights(self._counts[np.searchsorted(self._hashes, own)])
        self._score[key_arr], self._kind[key_arr] = weight, kind

    def _merge_delta(self, force: bool) -> None:
        """Fold the entries kept aside into the sorted list once there are many."""
        if not self._delta or (len(self._delta) < DELTA_MAX and not force):
            self._delta.sort()
            return
        self._delta.sort()
        merged = list(heapq.merge(zip(self._entries, self._entry_keys.tolist(), strict=True),
                                  self._delta))
        self._entries = [e for e, _ in merged]
        self._entry_keys = np.fromiter((k for _, k in merged), np.int32, len(merged))
        self._delta = []

    def entries(self) -> Iterable[tuple[str, str, str, int]]:
        """Every (folded entry, text, kind, weight) offered now, a later-word entry of a
        phrase too: the same data a SQL peer holds (``benchmarks/suggestions_latency.py``)."""
        with self.lock:
            self._merge_delta(force=True)
            for entry, key in zip(self._entries, self._entry_keys.tolist(), strict=True):
                if self._score[key] > 0:
                    yield entry, self._texts[key], KINDS[self._kind[key]], int(self._score[key])

    # ---- answering ------------------------------------------------------------------------
    def complete(self, folded_prefix: str, limit: int) -> list[Completion]:
        """The ``limit`` heaviest completions starting with ``folded_prefix`` at a word start.

        Example:
            >>> index = CompletionIndex()
            >>> index.add([CompletionSource(1, "a.md", "Setup", "", ("Ports",), True)])
            >>> [(c.text, c.kind) for c in index.complete("p", 3)]
            [('Ports', 'heading')]
        """
        if not folded_prefix:
            return []
        with self.lock:
            lo = bisect.bisect_left(self._entries, folded_prefix)
            hi = bisect.bisect_left(self._entries, folded_prefix + TOP, lo)
            keys = self._entry_keys[lo:hi]
            dlo = bisect.bisect_left(self._delta, (folded_prefix,))
            dhi = bisect.bisect_left(self._delta, (folded_prefix + TOP,), dlo)
            if dhi > dlo:
                keys = np.concatenate([keys, [k for _, k in self._delta[dlo:dhi]]]).astype(
                    np.int64)
            return self._best(keys, limit)

    def _best(self, keys: np.ndarray, limit: int) -> list[Completion]:
        if not len(keys):
            return []
        scores = self._score[keys]
        want = min(len(keys), limit * 4)  # a key may match by several words: room for repeats
        if len(keys) > want:
            top = np.argpartition(-scores, want - 1)[:want]
            keys, scores = keys[top], scores[top]
        ranked = sorted({int(k): int(sc) for k, sc in zip(keys.tolist(), scores.tolist(),
                                                          strict=True) if sc > 0}.items(),
                        key=lambda ks: (-ks[1], len(self._texts[ks[0]]), self._texts[ks[0]]))
        return [Completion(self._texts[k], KINDS[self._kind[k]], sc) for k, sc in ranked[:limit]]


def _title(src: CompletionSource) -> str | None:
    """The title's text: metadata, else a file's name without extension, else first heading."""
    if src.title and src.title.strip():
        return " ".join(src.title.split())[:MAX_TEXT]
    if src.from_file:
        name = src.external_id.replace("\\", "/").rsplit("/", 1)[-1]
        stem = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
        if stem.strip():
            return " ".join(stem.replace("_", " ").split())[:MAX_TEXT]
    if src.headings:
        return src.headings[0][:MAX_TEXT]
    return None


def _word_worth_offering(word: str) -> bool:
    """A single word offered as a phrase: 3+ characters, not only digits."""
    return len(word) >= 3 and not word.isdigit()


def _weights(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(weight, kind) per row of per-kind counts: titles and headings offered from one
    document, phrases from ``MIN_PHRASE_DOCS``; weight 0 when not offered."""
    titled = counts[:, TITLE] + counts[:, HEADING] > 0
    offered = titled | (counts[:, PHRASE] >= MIN_PHRASE_DOCS)
    weight = np.where(offered, counts.max(axis=1), 0).astype(np.int32)
    kind = np.where(counts[:, TITLE] > 0, TITLE,
                    np.where(counts[:, HEADING] > 0, HEADING, PHRASE)).astype(np.int8)
    return weight, kind
