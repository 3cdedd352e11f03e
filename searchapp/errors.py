"""Errors the core raises, each with a message a user can act on.

The CLI prints ``str(error)`` on one line and exits 1; the UI shows it with
``st.error``. Neither shows a traceback for these.

Example:
    >>> from searchapp.errors import CorpusNotFoundError
    >>> str(CorpusNotFoundError("faq", ["docs", "tickets"]))
    "No corpus named 'faq'. Existing corpora: docs, tickets."
"""

from __future__ import annotations

from collections.abc import Iterable


class SearchAppError(Exception):
    """Base class: anything the user can fix by changing input or settings."""


class ConfigError(SearchAppError):
    """A setting from the environment is invalid."""


class IngestError(SearchAppError):
    """An uploaded file cannot be read or does not fit (nothing was stored)."""


class TrainingDataError(IngestError):
    """A file of labelled training pairs is unusable (nothing was started)."""


class ModelError(SearchAppError):
    """A model cannot be found or loaded."""


class IndexCorruptError(SearchAppError):
    """An index file is unreadable; callers rebuild it from the database."""


class DatabaseBusyError(SearchAppError):
    """Another process held the database's write lock longer than the busy timeout."""

    def __init__(self, seconds: float):
        super().__init__(
            f"The database is busy: another process (a worker, a command or the app) held its "
            f"write lock for more than {seconds:g} s, so nothing was written. Try again when "
            "it has finished, or wait longer with SEARCHAPP_BUSY_TIMEOUT=SECONDS.")
        self.seconds = seconds


class JobError(SearchAppError):
    """A job cannot be found, enqueued, or changed as asked."""


class JobCancelled(SearchAppError):
    """Raised inside a running task when the user asked to cancel it."""


class InvalidParameterError(SearchAppError):
    """A parameter (k, threshold, batch size, ...) is out of its valid range."""


class CheckpointError(SearchAppError):
    """A training checkpoint is not in the safe format; it was refused, not loaded."""


class InvalidNameError(InvalidParameterError):
    """A corpus or model name could become a path outside the data folder; refused."""


class InvalidModelNameError(InvalidNameError, ModelError):
    """A new model's name is not a safe folder name (a ModelError too, as before)."""


class OutputPathError(SearchAppError):
    """An output file (``--out``) cannot be written where it was asked for."""


class ModelCardError(ModelError):
    """A model folder's metadata (its card or config.json) is unreadable."""


class CorpusChangedError(SearchAppError):
    """The corpus changed under a computation in a way it cannot skip over."""

    def __init__(self, what: str = "The corpus", during: str = "its clusters were computed"):
        super().__init__(f"{what} changed while {during} (documents were added or removed); "
                         "nothing was stored. Run it again.")


def _listing(names: Iterable[str]) -> str:
    names = sorted(names)
    return ", ".join(names) if names else "(none yet)"


class CorpusNotFoundError(SearchAppError):
    """No corpus of that name; the message lists the ones that exist."""

    def __init__(self, name: str, existing: Iterable[str] = ()):
        super().__init__(f"No corpus named {name!r}. Existing corpora: {_listing(existing)}.")
        self.name = name


class CorpusDeletedError(SearchAppError):
    """A corpus disappeared while something was working on it."""

    def __init__(self, what: str = "The corpus"):
        super().__init__(f"{what} was deleted while this was running; nothing more was stored.")


class EmptyCorpusError(SearchAppError):
    """The corpus has no embedded documents yet; the message says what its embedding is at.

    ``job`` is the active embed job as (id, status, done, total), or None when none is
    queued or running.

    Example:
        >>> str(EmptyCorpusError("faq", (3, "running", 128, 300)))
        "Corpus 'faq' has no embedded documents yet: its embedding job 3 is at 128 of 300."
    """

    def __init__(self, name: str, job: tuple[int, str, int, int] | None = None):
        super().__init__(f"Corpus {name!r} has no embedded documents yet: "
                         f"{_embedding_state(name, job)}")
        self.name = name


def _embedding_state(name: str, job: tuple[int, str, int, int] | None) -> str:
    if job is None:
        return ("no embedding job is queued; start one with `searchapp embed --corpus "
                f"{name}` or from the Search page.")
    job_id, status, done, total = job
    if status == "queued":
        return f"its embedding job {job_id} is queued; is a worker running (`searchapp worker`)?"
    return f"its embedding job {job_id} is at {done} of {total}."


def check_range(name: str, value: float, low: float, high: float) -> float:
    """Return ``value`` if ``low <= value <= high``, else raise InvalidParameterError.

    Example:
        >>> check_range("threshold", 0.8, -1.0, 1.0)
        0.8
    """
    if not (low <= value <= high):
        raise InvalidParameterError(f"{name} must be between {low} and {high}; got {value}.")
    return value


class JudgementError(SearchAppError):
    """A judgement names something the corpus does not have, or a file of them is unusable."""
