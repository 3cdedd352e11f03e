"""A long results list drawn one page at a time, and the list kept between reruns.

k (1 to 1,000) is how many results a search returns; only ``PAGE_SIZE`` of them
are drawn at once, so a page costs the same to draw at any k. The list itself is
computed once per request and kept in the session (``kept_hits``) while the
request and the corpus' generation stay the same: a judgement click or a page
turn reruns the page without searching again.

Example:
    >>> page_bounds(page=3, total=45)
    (40, 45)
    >>> pages_of(45), pages_of(0)
    (3, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

import streamlit as st

PAGE_SIZE = 20  # hits drawn per page: about two screens of dense rows
KEPT_HITS = "search.hits"  # (signature, hits) of the last list computed in this session
T = TypeVar("T")


def pages_of(total: int, size: int = PAGE_SIZE) -> int:
    """How many pages ``total`` results fill (at least one).

    Example:
        >>> pages_of(20), pages_of(21)
        (1, 2)
    """
    return max(1, -(-total // size))


def page_bounds(page: int, total: int, size: int = PAGE_SIZE) -> tuple[int, int]:
    """[first, end) of page ``page`` (1-based) in a list of ``total`` results.

    Example:
        >>> page_bounds(1, 1000)
        (0, 20)
        >>> page_bounds(60, 1000)
        (1000, 1000)
    """
    first = min((page - 1) * size, total)
    return first, min(first + size, total)


def kept_hits(signature: Hashable, compute: Callable[[], T]) -> T:
    """The list for ``signature`` (what was asked and the corpus generation it was asked
    at): the one kept in this session when the signature is the same, else ``compute()``
    (kept for the next rerun). One list is kept per session (a search's is its hits and
    its answers).

    Example (inside a page script):
        >>> hits = kept_hits((corpus, generation, query, k), lambda: search(...))  # doctest: +SKIP
    """
    kept = st.session_state.get(KEPT_HITS)
    if kept is not None and kept[0] == signature:
        return kept[1]
    hits = compute()
    st.session_state[KEPT_HITS] = (signature, hits)
    return hits


def forget_hits() -> None:
    """Drop the kept list: the next ``kept_hits`` computes it again (a new Search click)."""
    st.session_state.pop(KEPT_HITS, None)
