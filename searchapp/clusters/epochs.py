"""UMAP's optimisation epochs as (done, total) counts, through its public ``tqdm_kwds``.

umap-learn runs its layout optimisation as ``for n in tqdm(range(n_epochs),
**tqdm_kwds)`` and takes ``tqdm_kwds`` as a constructor argument; it offers no
other callback. So the bar is turned on (``disable=False``) with a format that
is nothing but ``{n}/{total}``, written to ``EpochCounter``, a file-like object
that reads those two numbers back and hands them on. The bar only observes
the loop: the layout is the same with or without it (tests/test_clusters.py
compares the two).

Example:
    >>> from tqdm.auto import tqdm  # the class umap.layouts iterates its epochs with
    >>> seen = []
    >>> counter = EpochCounter(lambda done, total: seen.append((done, total)))
    >>> for _ in tqdm(range(3), **counter.tqdm_kwds()):
    ...     pass
    >>> seen
    [(0, 3), (1, 3), (2, 3), (3, 3)]
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable

_COUNT = re.compile(r"\s*(\d+)/(\d+)\s*")


class EpochCounter:
    """A file for tqdm to write ``n/total`` to; calls ``on_epoch(n, total)`` once per change.

    Only writes from the thread that made it count: tqdm's monitor thread may
    refresh a bar, and a report from there could neither stop the job when it
    is cancelled nor write to the job's row safely.
    """

    def __init__(self, on_epoch: Callable[[int, int], None]):
        self.on_epoch = on_epoch
        self._thread = threading.get_ident()
        self._last: tuple[int, int] | None = None

    def tqdm_kwds(self) -> dict:
        """UMAP's ``tqdm_kwds``: a bar on every epoch, written here as ``n/total``.

        Example:
            >>> sorted(EpochCounter(print).tqdm_kwds())
            ['bar_format', 'disable', 'file', 'leave', 'mininterval', 'miniters']
        """
        return {"disable": False, "file": self, "bar_format": "{n}/{total}", "leave": True,
                "mininterval": 0.0, "miniters": 1}

    def write(self, text: str) -> None:
        """Read ``\\r37/500`` (tqdm's line) as epoch 37 of 500; ignore the rest."""
        match = _COUNT.fullmatch(text)
        if match is None or threading.get_ident() != self._thread:
            return
        count = int(match[1]), int(match[2])
        if count != self._last:  # tqdm draws the last state twice when it closes
            self._last = count
            self.on_epoch(*count)

    def flush(self) -> None:
        """Nothing is buffered."""

