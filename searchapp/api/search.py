"""Search a corpus and check a new text for duplicates, as the CLI and the pages do.

    POST /corpora/{name}/search             query, k, mode, filters, minimum score
    POST /corpora/{name}/duplicates/check   likely duplicates of a new text

A search is a POST (as Qdrant's and Chroma's queries are): the query and filters
travel in the body, not in logs of URLs. Read-only keys may use both. Its answer
carries a ``Server-Timing`` header with the milliseconds of each stage of the
query (``searchapp.base.timing``), e.g. ``tokenize;dur=0.05, encode;dur=3.1, ...,
total;dur=6.2``: browsers' developer tools show it beside the request.

Example:
    >>> sorted(r.path for r in router.routes)
    ['/corpora/{name}/duplicates/check', '/corpora/{name}/search']
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Response

from searchapp.api import schemas as s
from searchapp.api.deps import AppDep, principal
from searchapp.api.problems import ProblemRoute
from searchapp.api.suggestions import Who, user_of
from searchapp.corpora.names import check_text_value

router = APIRouter(tags=["search"], route_class=ProblemRoute, dependencies=[Depends(principal)])
Name = Annotated[str, Path(min_length=1, max_length=200, examples=["faq"])]


@router.post("/corpora/{name}/search", response_model=s.SearchOut, summary="Search a corpus")
def search(body: s.SearchIn, name: Name, app: AppDep, response: Response, who: Who
           ) -> s.SearchOut:
    from searchapp.answers.service import result_json, search_with_answers
    from searchapp.base.timing import StageTimes
    from searchapp.search.coverage import missing_of
    from searchapp.search.history import remember
    from searchapp.search.service import hit_json, understood
    from searchapp.search.spelling import query_to_run

    times = StageTimes()
    check_text_value(body.query, "query")
    for condition in body.where:
        check_text_value(condition, "filter")
    query, fixed = query_to_run(app, name, body.query, body.as_typed)
    hits, answered = search_with_answers(app, name, query, answer=body.answer, k=body.k,
                                         min_score=body.min_score, mode=body.mode,
                                         where=body.where, times=times, rerank=body.rerank)
    response.headers["Server-Timing"] = times.server_timing()
    plan = understood(app, name, query)
    remember(app, name, user_of(who), body.query)  # after it ran: a failed search is not kept
    return s.SearchOut(mode=body.mode, rerank=body.rerank, **result_json(answered),
                       missing=list(missing_of(hits)),
                       understood=s.UnderstoodOut(**plan.as_json()),
                       did_you_mean=fixed.as_json() if fixed else None,
                       results=[s.Hit(**hit_json(h)) for h in hits])


@router.post("/corpora/{name}/duplicates/check", response_model=s.DuplicateCheckOut,
             summary="Likely duplicates of a new text")
def duplicates_check(body: s.DuplicateCheckIn, name: Name, app: AppDep
                     ) -> s.DuplicateCheckOut:
    from searchapp.duplicates import check

    check_text_value(body.text, "text")
    matches = check(app, name, body.text, body.threshold)
    return s.DuplicateCheckOut(matches=[s.MatchOut(**m.as_dict()) for m in matches])
