"""How fast a running step goes and when it ends: items per second and time left.

The rate is measured from the progress a task reports over time (a sliding
window of recent reports), per step: a new step starts when the total changes
or the count goes back, so the minutes spent loading a model never dilute the
embedding rate, and a resumed job measures only what it does now.

The worker writes the horizon at the end of the job's message, after
``SEPARATOR``, so the UI and ``searchapp jobs`` show the same words.

Example:
    >>> meter = RateMeter("documents")
    >>> meter.observe(0, 1000, now=0.0)
    >>> print(meter.observe(400, 1000, now=2.0))
    200 documents/s · about 3 s left
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

SEPARATOR = " · "
WINDOW_SECONDS = 30.0  # the rate is that of the last half minute: it follows a slowing machine
MIN_SPAN_SECONDS = 0.5  # a rate needs at least this much time between two reports


@dataclass(frozen=True)
class Horizon:
    """A step's measured rate (items per second) and the seconds left at that rate."""

    rate: float
    seconds_left: float
    unit: str = "items"

    def __str__(self) -> str:
        return f"{rate_text(self.rate, self.unit)}{SEPARATOR}{left_text(self.seconds_left)}"


def rate_text(rate: float, unit: str) -> str:
    """'1,234 documents/s', '2.5 steps/s' or '12 s per step' (slow steps read better so).

    Example:
        >>> rate_text(0.05, "steps")
        '20 s per step'
    """
    if rate >= 10:
        return f"{rate:,.0f} {unit}/s"
    if rate >= 1:
        return f"{rate:.1f} {unit}/s"
    return f"{1 / rate:,.0f} s per {unit.removesuffix('s')}"


def left_text(seconds: float) -> str:
    """'about 40 s left', 'about 3 min left', 'about 1 h 20 min left'.

    Example:
        >>> left_text(200)
        'about 3 min left'
    """
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"about {max(1, round(seconds))} s left"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min left"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"about {hours} h {minutes} min left"


class RateMeter:
    """Rate and time left of one step from the (time, done) reports of a task.

    ``observe`` returns None until two reports of the same step are
    ``MIN_SPAN_SECONDS`` apart with some progress between them.
    """

    def __init__(self, unit: str = "items", window: float = WINDOW_SECONDS):
        self.unit = unit
        self.window = window
        self._total: int | None = None
        self._samples: deque[tuple[float, int]] = deque()

    def observe(self, done: int, total: int, now: float) -> Horizon | None:
        """Record a report; the horizon of the current step, if it can be measured yet."""
        if total != self._total or (self._samples and done < self._samples[-1][1]):
            self._total, self._samples = total, deque()  # a new step
        self._samples.append((now, done))
        while len(self._samples) > 2 and now - self._samples[1][0] >= self.window:
            self._samples.popleft()  # keep one sample at least `window` old
        first_at, first_done = self._samples[0]
        span, gained = now - first_at, done - first_done
        if span < MIN_SPAN_SECONDS or gained <= 0 or total <= 0:
            return None
        rate = gained / span
        return Horizon(rate, max(0, total - done) / rate, self.unit)


def split_message(message: str | None) -> tuple[str, str]:
    """A job message → (what the task said, its rate and time left, or "").

    Example:
        >>> split_message("Embedded 400 of 1,000 · 200 documents/s · about 3 s left")
        ('Embedded 400 of 1,000', '200 documents/s · about 3 s left')
    """
    parts = (message or "").split(SEPARATOR)
    if len(parts) >= 3 and parts[-1].endswith(" left") and parts[-1].startswith("about "):
        return SEPARATOR.join(parts[:-2]), SEPARATOR.join(parts[-2:])
    return message or "", ""
