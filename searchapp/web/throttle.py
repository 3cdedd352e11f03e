"""Wrong passwords slow down, per client: a few free tries, then an exponential wait.

The rule: a client (keyed on its address) has ``free_failures`` wrong
passwords for free; after that, each further try must wait
``base_seconds * 2**(failures - free_failures)`` since the last failure, at
most ``max_seconds`` (1 s, 2 s, 4 s, ... 5 minutes). A try during the wait is
answered 429 with ``Retry-After``, without hashing the password. One try per
client is checked at a time. A right password clears the client's record,
and a record without a new failure for ``forget_seconds`` is forgotten: the
right user is slowed, never locked out. At most 5 minutes per guess leaves
about 288 guesses a day to someone with one address.

The slow part of a check (scrypt: 0.1 s and 32 MiB each) runs in a thread
under a small ``CapacityLimiter`` kept by the door, so parallel guesses from
many addresses cannot exhaust memory either.

Example:
    >>> clock = [0.0]
    >>> t = LoginThrottle(free_failures=2, clock=lambda: clock[0])
    >>> for _ in range(3):
    ...     t.failed("10.0.0.1")
    >>> t.wait("10.0.0.1"), t.wait("10.0.0.2")
    (2.0, 0.0)
    >>> clock[0] += 2.0
    >>> t.wait("10.0.0.1")
    0.0
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

FREE_FAILURES = 3
BASE_SECONDS = 1.0
MAX_SECONDS = 300.0
FORGET_SECONDS = 3600.0
MAX_CLIENTS = 10_000


@dataclass
class _Record:
    failures: int = 0
    last_failure: float = 0.0
    checking: bool = False


class LoginThrottle:
    """Failed logins per client and the wait they impose; thread-safe."""

    def __init__(self, free_failures: int = FREE_FAILURES, base_seconds: float = BASE_SECONDS,
                 max_seconds: float = MAX_SECONDS, forget_seconds: float = FORGET_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.free_failures = free_failures
        self.base_seconds = base_seconds
        self.max_seconds = max_seconds
        self.forget_seconds = forget_seconds
        self.clock = clock
        self._lock = threading.Lock()
        self._records: dict[str, _Record] = {}

    def delay(self, failures: int) -> float:
        """How long a client with ``failures`` wrong passwords waits after the last one.

        Example:
            >>> [LoginThrottle().delay(n) for n in (2, 3, 4, 5, 20)]
            [0.0, 1.0, 2.0, 4.0, 300.0]
        """
        if failures < self.free_failures:
            return 0.0
        return min(self.base_seconds * 2 ** (failures - self.free_failures), self.max_seconds)

    def wait(self, client: str) -> float:
        """Seconds before ``client`` may try again (0.0: now).

        Example:
            >>> LoginThrottle().wait("10.0.0.1")
            0.0
        """
        with self._lock:
            record = self._current(client)
            if record is None:
                return 0.0
            if record.checking:
                return self.base_seconds
            left = record.last_failure + self.delay(record.failures) - self.clock()
            return max(left, 0.0)

    def begin(self, client: str) -> bool:
        """Claim ``client``'s one check at a time; False when another one is running or the
        client must still wait (then answer 429 without checking).

        Example:
            >>> t = LoginThrottle(); t.begin("a"), t.begin("a")
            (True, False)
        """
        with self._lock:
            record = self._current(client)
            now = self.clock()
            if record is not None and (
                    record.checking or now < record.last_failure + self.delay(record.failures)):
                return False
            if record is None:
                if len(self._records) >= MAX_CLIENTS:
                    self._prune(now)
                record = self._records[client] = _Record()
            record.checking = True
            return True

    def failed(self, client: str) -> None:
        """Count a wrong password (ends a check ``begin`` claimed)."""
        with self._lock:
            record = self._current(client) or self._records.setdefault(client, _Record())
            record.failures += 1
            record.last_failure = self.clock()
            record.checking = False

    def succeeded(self, client: str) -> None:
        """The right password: forget the client's failures."""
        with self._lock:
            self._records.pop(client, None)

    def abandoned(self, client: str) -> None:
        """A claimed check that ended without an answer (the request failed): release it."""
        with self._lock:
            record = self._records.get(client)
            if record is not None:
                record.checking = False
                if not record.failures:
                    del self._records[client]

    def _current(self, client: str) -> _Record | None:
        record = self._records.get(client)
        if record is not None and not record.checking and record.failures and \
                self.clock() - record.last_failure > self.forget_seconds:
            del self._records[client]
            return None
        return record

    def _prune(self, now: float) -> None:
        """Drop forgotten records; if still full, the oldest failures go first."""
        for client in [c for c, r in self._records.items()
                       if not r.checking and now - r.last_failure > self.forget_seconds]:
            del self._records[client]
        while len(self._records) >= MAX_CLIENTS:
            oldest = min(self._records, key=lambda c: self._records[c].last_failure)
            del self._records[oldest]
