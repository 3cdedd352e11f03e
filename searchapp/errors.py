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


class StorageError(SearchAppError):
    """The database or the data folder cannot do what was asked (``store/failures.py`` sorts
    every database error into one of the subclasses, each saying what to do)."""


class DatabaseBusyError(StorageError):
    """Another process held the database's write lock longer than the busy timeout."""

    def __init__(self, seconds: float):
        super().__init__(
            f"The database is busy: another process (a worker, a command or the app) held its "
            f"write lock for more than {seconds:g} s, so nothing was written. Try again when "
            "it has finished, or wait longer with SEARCHAPP_BUSY_TIMEOUT=SECONDS.")
        self.seconds = seconds


class NotADatabaseError(StorageError):
    """The database file is not SQLite, or is damaged; it was not changed."""

    def __init__(self, where: str, damaged: bool = False):
        what = "is damaged (SQLite: malformed)" if damaged else "is not a SQLite database"
        super().__init__(
            f"{where} {what}; nothing was changed. Point SEARCHAPP_DATA_DIR (or "
            "SEARCHAPP_DATABASE_URL) elsewhere, or move the file away to start a new database"
            + (" (or restore it from a backup)." if damaged else "."))


class ForeignDatabaseError(StorageError):
    """The database holds a ``schema_info`` table that is not searchapp's; it was not changed.

    Example:
        >>> str(ForeignDatabaseError("sqlite:////tmp/x.db"))[:60]
        'The database sqlite:////tmp/x.db is not a searchapp database'
    """

    def __init__(self, where: str):
        super().__init__(
            f"The database {where} is not a searchapp database (its schema_info table has no "
            "single whole-number version); nothing was changed. Point SEARCHAPP_DATA_DIR (or "
            "SEARCHAPP_DATABASE_URL) at a searchapp database or an empty place.")


class ReadOnlyError(StorageError):
    """A write to a read-only data folder, database file or database; nothing was written."""

    def __init__(self, where: str, folder: bool = True):
        kind = "data folder" if folder else "database"
        super().__init__(
            f"The {kind} {where} is read-only, so nothing was changed; reading still works. "
            "To change anything, make it writable or point SEARCHAPP_DATA_DIR at a writable "
            "folder.")


class DiskFullError(StorageError):
    """The disk (or a quota, or a file size limit) has no room; the write was undone."""

    def __init__(self, where: str):
        super().__init__(
            f"The disk holding {where} is full, so nothing was stored (the change was undone). "
            "Free some space and run it again.")


class DiskIOError(StorageError):
    """The operating system refused to read or write a file (not a full disk)."""

    def __init__(self, where: str, reason: str = "disk I/O error"):
        super().__init__(
            f"Cannot read or write {where} ({reason}); nothing was stored. Check the disk and "
            "the file (its size limit, the device) and run it again.")


class DatabaseUnavailableError(StorageError):
    """The database cannot be opened or reached at all."""

    def __init__(self, where: str, reason: str):
        super().__init__(
            f"Cannot open the database {where}: {reason}. Check SEARCHAPP_DATA_DIR or "
            "SEARCHAPP_DATABASE_URL, that the server runs and that this user may use it.")


class ConflictError(StorageError):
    """Another process changed the same rows at the same moment; this change was undone."""

    def __init__(self, what: str = "the same row"):
        super().__init__(
            f"Another process changed {what} at the same moment, so nothing was stored. "
            "Run it again.")


class SchemaTooNewError(StorageError, ConfigError):
    """The database was made by a newer searchapp; nothing was changed."""

    def __init__(self, version: int, ours: int):
        super().__init__(
            f"The database is at schema version {version}, newer than this searchapp "
            f"({ours}). Upgrade searchapp or point SEARCHAPP_DATABASE_URL elsewhere.")


def os_error(exc: OSError, where: object) -> StorageError | None:
    """The StorageError an OSError means for a write to ``where`` (disk full, read-only, ...);
    None when it is none of those (the caller decides).

    Example:
        >>> import errno
        >>> type(os_error(OSError(errno.ENOSPC, "No space left"), "/data")).__name__
        'DiskFullError'
    """
    import errno

    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return DiskFullError(str(where))
    if exc.errno == errno.EFBIG:
        return DiskIOError(str(where), "the file would grow past its size limit")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return ReadOnlyError(str(where))
    if exc.errno == errno.EIO:
        return DiskIOError(str(where))
    if exc.errno == errno.ELOOP or type(exc).__name__ == "UnsafeFileError":
        return LinkedFileError(str(exc.strerror or exc))
    return None


class LinkedFileError(StorageError):
    """A file the app writes is a link (or not a plain file): it is left alone. The message
    names it and says to remove it (``private_files.open_private``)."""


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


class NotFoundError(SearchAppError):
    """Something asked for by name or id does not exist (the API answers 404)."""


class AlreadyExistsError(SearchAppError):
    """The request clashes with what is stored: a name taken, a state that forbids it (409)."""


class PermissionDeniedError(SearchAppError):
    """The credential may not do this: a read-only API key asked to change something (403)."""


class DataFolderBusyError(SearchAppError):
    """A data folder is held by another process (a restore, or the app while restoring)."""


class BackupError(SearchAppError):
    """A backup cannot be written, or an archive is refused by restore (nothing was changed)."""


class JobNotFoundError(JobError, NotFoundError):
    """No job with that id."""


class DocumentNotFoundError(NotFoundError):
    """No document with that id in the corpus."""

    def __init__(self, corpus: str, external_id: str):
        super().__init__(f"Corpus {corpus!r} has no document with id {external_id!r}.")


class CorpusNotFoundError(NotFoundError):
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


class JudgementNotFoundError(JudgementError, NotFoundError):
    """No judgement with that id in the corpus (already undone, or another corpus')."""


class WatchError(SearchAppError):
    """A watched folder cannot be added or changed as asked (not a folder, watched already)."""


class WatchedFolderNotFoundError(WatchError, NotFoundError):
    """No watched folder has that id or path."""

    def __init__(self, ref: str):
        super().__init__(f"No watched folder {ref!r}; `searchapp watch list` shows them.")


class NoRerankerError(SearchAppError):
    """Reranking was asked on a corpus that has no reranker attached; says how to get one.

    Example:
        >>> print(NoRerankerError("faq"))  # doctest: +ELLIPSIS
        Corpus 'faq' has no reranker: ...searchapp judge train-reranker --corpus faq...
    """

    def __init__(self, name: str):
        super().__init__(
            f"Corpus {name!r} has no reranker: one is attached only after it was trained on "
            f"the corpus' query judgements and beat no reranking on the held-out ones. Train "
            f"one with `searchapp judge train-reranker --corpus {name}`, or search without "
            "reranking.")
        self.name = name


class SavedSearchError(SearchAppError):
    """A saved search cannot be made or changed as asked (a bad webhook address, a bad k)."""


class WebhookAddressError(SavedSearchError, InvalidParameterError):
    """A webhook URL the app will not send to; says what an acceptable one looks like."""

    def __init__(self, url: str, why: str):
        super().__init__(f"Webhook URL {url!r} {why}; give an http:// or https:// address "
                         "with a host, such as https://hooks.example.org/searchapp.")


class SavedSearchNotFoundError(SavedSearchError, NotFoundError):
    """No saved search with that id."""

    def __init__(self, saved_id: int | str):
        super().__init__(f"No saved search with id {saved_id}; `searchapp saved list` "
                         "shows them.")


class SavedSearchNameTakenError(SavedSearchError, AlreadyExistsError):
    """The corpus has a saved search of that name already."""

    def __init__(self, name: str):
        super().__init__(f"A saved search named {name!r} exists already in this corpus; "
                         "choose another name, or remove that one first.")
