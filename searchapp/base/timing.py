"""Stage times of one request: where a query's milliseconds go, cheaply enough to keep on.

A ``StageTimes`` is made per request and handed down the query path; each stage
adds the nanoseconds it took under its name (``time.perf_counter_ns``, no
logging, no locks: a stage is one dictionary update). Stages may run on other
threads at the same time as others (the full-text search runs beside the
encoder), so their sum can exceed the wall-clock ``total``. The API returns them
in a ``Server-Timing`` header (W3C Server Timing: ``name;dur=milliseconds``);
``benchmarks/query_latency.py`` reports their p50/p95.

Example:
    >>> times = StageTimes()
    >>> with times.stage("encode"):
    ...     _ = sum(range(1000))
    >>> times.add("rows", 1_500_000)
    >>> times.ms()["rows"]
    1.5
    >>> times.server_timing().startswith("encode;dur=")
    True
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

# the stages of a search, in the order they are reported (others follow in their own order)
SEARCH_STAGES = ("translate", "tokenize", "encode", "query-cache", "vector", "passages", "fulltext",
                 "fusion", "rows", "snippets")


class StageTimes:
    """Nanoseconds per named stage of one request, and the time since it was made."""

    __slots__ = ("_desc", "_ns", "_started")

    def __init__(self) -> None:
        self._ns: dict[str, int] = {}
        self._desc: dict[str, str] = {}
        self._started = time.perf_counter_ns()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the ``with`` block as stage ``name`` (added to what it already has).

        Example:
            >>> t = StageTimes()
            >>> with t.stage("rows"):
            ...     pass
            >>> list(t.ms())
            ['rows']
        """
        started = time.perf_counter_ns()
        try:
            yield
        finally:
            self.add(name, time.perf_counter_ns() - started)

    def add(self, name: str, ns: int) -> None:
        """Add ``ns`` nanoseconds to stage ``name`` (for a stage timed by its own caller)."""
        self._ns[name] = self._ns.get(name, 0) + ns

    def describe(self, name: str, desc: str) -> None:
        """Say how stage ``name`` was done (the encoder's path): the header's ``desc``.

        Example:
            >>> t = StageTimes(); t.add("encode", 10**6); t.describe("encode", "onnx-1")
            >>> t.server_timing().split(", ")[0]
            'encode;desc="onnx-1";dur=1'
        """
        self._desc[name] = desc.replace('"', "'")

    def ms(self) -> dict[str, float]:
        """Milliseconds per stage, the search stages first in their order.

        Example:
            >>> t = StageTimes(); t.add("rows", 2_000_000); t.add("encode", 1_000_000)
            >>> t.ms()
            {'encode': 1.0, 'rows': 2.0}
        """
        order = [s for s in SEARCH_STAGES if s in self._ns]
        order += [s for s in self._ns if s not in SEARCH_STAGES]
        return {s: round(self._ns[s] / 1e6, 3) for s in order}

    def total_ms(self) -> float:
        """Milliseconds since this object was made (the request's wall-clock time so far)."""
        return round((time.perf_counter_ns() - self._started) / 1e6, 3)

    def server_timing(self) -> str:
        """The stages and the total as a ``Server-Timing`` header value.

        Example:
            >>> t = StageTimes(); t.add("encode", 2_500_000)
            >>> t.server_timing().split(", ")[0]
            'encode;dur=2.5'
        """
        parts = [f"{name};desc=\"{self._desc[name]}\";dur={ms:g}" if name in self._desc
                 else f"{name};dur={ms:g}" for name, ms in self.ms().items()]
        parts.append(f"total;dur={self.total_ms():g}")
        return ", ".join(parts)
