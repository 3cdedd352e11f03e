"""Suggestions as you type, and the search history they start from.

    GET    /corpora/{name}/suggest?q=…&limit=…   completions of what was typed (JSON list)
    GET    /history?corpus=…                     your recent searches, most recent first
    DELETE /history?corpus=…                     forget them (of one corpus, or all)

"Your" is whoever the door let in: an API key has a history of its own (``key:<id>``),
never a login's or another key's; a login of a password-protected server is
``browser``, the open server's local user ``local`` (``search/history.py``). A
read-only key may clear its own history: searching wrote it, and it is nobody else's.

Example:
    >>> sorted(r.path for r in router.routes)
    ['/corpora/{name}/suggest', '/history', '/history']
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from searchapp.api import schemas as s
from searchapp.api.deps import AppDep, principal
from searchapp.api.problems import ProblemRoute
from searchapp.search import history
from searchapp.search.suggest import DEFAULT_LIMIT, MAX_LIMIT
from searchapp.web.identity import Principal

router = APIRouter(tags=["suggestions"], route_class=ProblemRoute)
Name = Annotated[str, Path(min_length=1, max_length=200, examples=["faq"])]
Who = Annotated[Principal, Depends(principal)]
CorpusFilter = Annotated[str | None, Query(min_length=1, max_length=200,
                                           description="Only this corpus' searches.")]


def user_of(who: Principal) -> str:
    """The history's user key of a credential: an API key's own, else the login or local.

    Example:
        >>> user_of(Principal("api-key", "key ci", key_id=4)), user_of(Principal("local", "x"))
        ('key:4', 'local')
    """
    if who.kind == "api-key" and who.key_id is not None:
        return history.key_user(who.key_id)
    return history.BROWSER_USER if who.kind == "browser" else history.LOCAL_USER


@router.get("/corpora/{name}/suggest", response_model=list[s.SuggestionOut],
            summary="Suggestions for what is being typed")
def suggest(name: Name, app: AppDep, who: Who,
            q: Annotated[str, Query(max_length=200, examples=["def po"])] = "",
            limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT
            ) -> list[s.SuggestionOut]:
    from searchapp.search.suggest import suggest as complete

    return [s.SuggestionOut(**x.as_dict()) for x in complete(app, name, q, user_of(who), limit)]


@router.get("/history", response_model=s.HistoryOut, summary="Your recent searches")
def recent(app: AppDep, who: Who, corpus: CorpusFilter = None) -> s.HistoryOut:
    found = history.past_searches(app, user_of(who), corpus)
    return s.HistoryOut(searches=[s.PastSearchOut(query=p.query, corpus=p.corpus,
                                                  searched_at=p.searched_at) for p in found])


@router.delete("/history", response_model=s.HistoryCleared, summary="Forget your searches")
def clear(app: AppDep, who: Who, corpus: CorpusFilter = None) -> s.HistoryCleared:
    return s.HistoryCleared(cleared=history.clear_history(app, user_of(who), corpus))
