"""GenerationMemo: derived results kept in memory while their corpus is unchanged.

A page that shows a stored analysis (a million duplicate pairs, a cluster map)
should not load and rebuild it on every rerun. Each value is filed under the
corpus and the generation it was computed at, so a value is never served for a
generation it was not made for: a new generation misses, and the old values of
that corpus are dropped when a newer generation is stored. A small LRU bound
keeps memory in check across corpora.

Example:
    >>> memo = GenerationMemo(max_items=8)
    >>> memo.get_or_make(1, 5, ("pairs", 10), lambda: "computed")
    'computed'
    >>> memo.get_or_make(1, 5, ("pairs", 10), lambda: "again")
    'computed'
    >>> memo.get_or_make(1, 6, ("pairs", 10), lambda: "new generation")
    'new generation'
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import TypeVar

T = TypeVar("T")


class GenerationMemo:
    """An LRU of values keyed by (corpus id, generation, key); thread-safe."""

    def __init__(self, max_items: int = 32):
        self.max_items = max_items
        self._items: OrderedDict[tuple, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, corpus_id: int, generation: int, key: Hashable):
        with self._lock:
            full = (corpus_id, generation, key)
            if full in self._items:
                self._items.move_to_end(full)
                return self._items[full]
        return None

    def put(self, corpus_id: int, generation: int, key: Hashable, value) -> None:
        with self._lock:
            for old in [k for k in self._items if k[0] == corpus_id and k[1] < generation]:
                del self._items[old]
            self._items[(corpus_id, generation, key)] = value
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    def latest(self, corpus_id: int, key: Hashable) -> tuple[int, object] | None:
        """(generation, value) of the newest value kept for (corpus, key), whatever its
        generation: what an incrementally kept value is brought up to date from.

        Example:
            >>> memo.latest(1, ("pairs", 10))                        # doctest: +SKIP
            (6, 'new generation')
        """
        with self._lock:
            found = [(k[1], v) for k, v in self._items.items() if k[0] == corpus_id
                     and k[2] == key]
        return max(found, key=lambda gv: gv[0]) if found else None

    def get_or_make(self, corpus_id: int, generation: int, key: Hashable,
                    make: Callable[[], T]) -> T:
        """The value for (corpus, generation, key), made by ``make()`` on a miss."""
        value = self.get(corpus_id, generation, key)
        if value is None:
            value = make()
            if value is not None:
                self.put(corpus_id, generation, key, value)
        return value

    def clear(self) -> None:
        """Drop every memo."""
        with self._lock:
            self._items.clear()

    def forget(self, corpus_id: int) -> None:
        with self._lock:
            for old in [k for k in self._items if k[0] == corpus_id]:
                del self._items[old]
