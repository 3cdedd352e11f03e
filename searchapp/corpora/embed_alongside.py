"""Embedding while an ingest is still reading files: search opens with the first batch.

An ingest of a big folder reads files in extraction processes and writes their
documents in batches; without this, nothing is searchable until every file has
been read and the embed job that follows has encoded the first batch.
``EmbedAlongside`` runs a thread in the ingest job that encodes each batch as soon
as it is committed (``embed_job.embed_rows``: the same store and index calls as the
embed job), while the extraction processes go on with the next files. The encoder
releases the GIL while it computes, and the ingest's own thread mostly waits on
the extraction processes' pipes, so the two overlap.

The embed job the ingest queues at its end stays the authority: it embeds what is
still missing (a changed document keeps its id, below the thread's keyset cursor;
a batch the thread had not finished when the ingest ended), writes the index
files and reports. A failure in the thread is logged and left to that job; a
cancel or a worker stopping is raised in the ingest itself at its next batch.

Example:
    >>> with EmbedAlongside(app, "manuals", ctx.checkpoint) as alongside:  # doctest: +SKIP
    ...     store_a_batch(); alongside.stored()
"""

from __future__ import annotations

import logging
import threading

from searchapp.context import App
from searchapp.corpora.embed_batches import (
    BATCH_CHARS_CPU,
    BATCH_CHARS_GPU,
    BATCH_CPU,
    BATCH_GPU,
    FIRST_BATCH,
)
from searchapp.corpora.embed_job import embed_rows
from searchapp.errors import JobCancelled
from searchapp.jobs.tasks import WorkerStopping
from searchapp.store import repo
from searchapp.vectors.handle import open_corpus

log = logging.getLogger(__name__)
WAIT_REPORT_SECONDS = 0.5  # how often the job's line is refreshed while the last batches embed


class _Stopped(Exception):
    """The ingest ended or failed: the thread stops between two sub-batches."""


class EmbedAlongside:
    """A thread that embeds a corpus' new documents while they are being stored."""

    def __init__(self, app: App, corpus: str, checkpoint=None, waiting=None):
        self.app, self.corpus, self._checkpoint = app, corpus, checkpoint
        self._waiting = waiting  # called while the reading is done and embedding goes on
        self.embedded = 0  # documents this thread embedded
        self._wake, self._reading_done, self._stop = (threading.Event(), threading.Event(),
                                                      threading.Event())
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="embed-alongside", daemon=True)

    def __enter__(self) -> EmbedAlongside:
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:  # the ingest failed or was cancelled: stop at once
            self._stop.set()
        self._reading_done.set()
        self._wake.set()
        try:
            while self._thread.is_alive():
                self._thread.join(WAIT_REPORT_SECONDS)
                if exc_type is None and self._waiting is not None and self._thread.is_alive():
                    self._waiting()  # the job's line says what it waits for (may cancel)
        except BaseException:
            self._stop.set()
            self._thread.join()
            raise
        if exc_type is None:
            self._raise_stop()

    def stored(self) -> None:
        """A batch was committed: embed it. Raises the thread's cancel, if it saw one."""
        self._raise_stop()
        self._wake.set()

    def _raise_stop(self) -> None:
        if isinstance(self._error, JobCancelled | WorkerStopping):
            raise self._error

    def _check(self) -> None:
        if self._stop.is_set():
            raise _Stopped()
        if self._checkpoint is not None:
            self._checkpoint()

    def _run(self) -> None:
        try:
            self._embed_until_read()
        except _Stopped:
            pass
        except (JobCancelled, WorkerStopping) as exc:
            self._error = exc
        except Exception as exc:  # the embed job after the ingest meets it and reports it
            self._error = exc
            log.warning("embedding alongside the ingest of %r stopped; the embed job will "
                        "do the rest", self.corpus, exc_info=exc)

    def _embed_until_read(self) -> None:
        app = self.app
        handle = open_corpus(app, self.corpus, require_vectors=False)
        encoder = None  # loaded at the first batch: a sync that stores nothing loads no model
        full, max_chars = BATCH_CPU, BATCH_CHARS_CPU
        after, batch = 0, min(FIRST_BATCH, full)
        while True:
            self._check()
            with app.db.session() as s:
                rows = repo.documents_missing_embedding(s, handle.corpus_id, handle.model.id,
                                                        after, batch, max_chars)
            if rows:
                if encoder is None:
                    encoder = app.encoder(handle.model.name)
                    if encoder.device.type == "cuda":
                        full, max_chars = BATCH_GPU, BATCH_CHARS_GPU
                after, batch = rows[-1][0], min(2 * batch, full)
                embed_rows(app, handle, encoder, rows, self._check)
                self.embedded += len(rows)
                continue
            if self._reading_done.is_set():
                return
            self._wake.wait()  # a set between the read above and here is not lost: it
            self._wake.clear()  # only makes the next read come sooner
