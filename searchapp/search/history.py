"""Who searched what: each user's recent searches per corpus, recorded, listed and cleared.

The front ends record a search when it runs (the Search page, ``searchapp search``,
``POST /api/v1/corpora/{name}/search``) under the user key of whoever ran it:

- ``local``: the CLI, and the pages and API of a server without a password (one
  person: whoever sits at the machine);
- ``browser``: the login of a password-protected server (one password, one user);
- ``key:<id>``: an API key, by its id: keys never see each other's history, nor a
  login's, nor the reverse.

The history is the first source of the suggestions (``search/suggest.py``). A failed
write of the history (a read-only data folder) never fails the search it follows.

Example:
    >>> remember(app, "faq", LOCAL_USER, "default port")            # doctest: +SKIP
    >>> [p.query for p in past_searches(app, LOCAL_USER, "faq")]    # doctest: +SKIP
    ['default port']
"""

from __future__ import annotations

import logging

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.store import search_history
from searchapp.store.catalog import corpus_state
from searchapp.store.search_history import PastSearch

LOCAL_USER = "local"
BROWSER_USER = "browser"
log = logging.getLogger(__name__)


def key_user(key_id: int) -> str:
    """The user key of an API key.

    Example:
        >>> key_user(3)
        'key:3'
    """
    return f"key:{int(key_id)}"


def page_user(password_required: bool) -> str:
    """The user key of the pages: the login of a password-protected server, else local.

    Example:
        >>> page_user(True), page_user(False)
        ('browser', 'local')
    """
    return BROWSER_USER if password_required else LOCAL_USER


def remember(app: App, corpus: str, user: str, query: str) -> None:
    """Record that ``user`` searched ``corpus`` for ``query``; never raises for a failed
    write (the search itself went well: it is logged and left)."""
    if app.db.read_only or not query.strip():
        return
    try:
        with app.db.session() as s:
            search_history.record(s, user, corpus_state(s, corpus).id, query)
    except SearchAppError as exc:
        log.warning("search history not recorded: %s", exc)


def past_searches(app: App, user: str, corpus: str | None = None,
                  limit: int = search_history.CAP) -> list[PastSearch]:
    """The user's recent searches, most recent first: of one corpus, or of all.

    Example:
        >>> past_searches(app, "local", "faq")                      # doctest: +SKIP
        [PastSearch(query='default port', corpus='faq', searched_at=...)]
    """
    with app.db.session() as s:
        corpus_id = corpus_state(s, corpus).id if corpus is not None else None
        return search_history.recent(s, user, corpus_id, limit)


def clear_history(app: App, user: str, corpus: str | None = None) -> int:
    """Forget the user's searches (of one corpus, or all); how many were forgotten.

    Example:
        >>> clear_history(app, "local")                             # doctest: +SKIP
        3
    """
    with app.db.session() as s:
        corpus_id = corpus_state(s, corpus).id if corpus is not None else None
        return search_history.clear(s, user, corpus_id)
