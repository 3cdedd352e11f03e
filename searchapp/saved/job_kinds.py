"""The saved searches' job kind, ``saved-check``, and the hooks that queue it: after each
``embed`` and ``ingest`` job that succeeded (``jobs.after``), the corpus' saved searches
are checked once against what arrived; nothing polls.

Example:
    >>> parse_payload(SAVED_CHECK, {"corpus": "faq"}).corpus
    'faq'
"""

from __future__ import annotations

from searchapp.jobs.after import after_success
from searchapp.jobs.kinds import declare, parse_payload  # noqa: F401 - doctest
from searchapp.jobs.tasks import TaskContext
from searchapp.saved.job_payloads import SavedCheckPayload


def _check(ctx: TaskContext, payload: SavedCheckPayload) -> dict:
    from searchapp.saved.check import check_corpus

    return check_corpus(ctx.app, payload.corpus)


def _after_documents(app, payload, result: dict) -> None:
    from searchapp.saved.check import after_documents

    after_documents(app, payload.corpus)


SAVED_CHECK = declare("saved-check", unit="saved searches", payload=SavedCheckPayload,
                      run=_check, doing="Checking saved searches of")
for _kind in ("embed", "ingest"):  # when documents become searchable
    after_success(_kind, _after_documents)
