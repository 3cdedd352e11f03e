"""Judgements over the API, so another app can send its users' feedback.

    POST   /corpora/{name}/judgements        add one (replaces an earlier label of the item)
    GET    /corpora/{name}/judgements        list them, oldest first (?kind=query|pair), a page
                                             at a time (?limit=, at most 1,000; ?cursor= the
                                             previous page's ``next_cursor``)
    DELETE /corpora/{name}/judgements/{id}   take one back

A query judgement is ``{"query", "doc", "label" 0-3}``, a pair ``{"a", "b",
"label" 0/1}``; they are stored with source ``api`` and count like any other
(the Label page's estimate, evaluation, learning).

Example:
    >>> sorted({r.path for r in router.routes})
    ['/corpora/{name}/judgements', '/corpora/{name}/judgements/{judgement_id}']
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query

from searchapp.api import schemas as s
from searchapp.api.corpora import Name
from searchapp.api.deps import AppDep, principal, writer
from searchapp.api.problems import ProblemRoute
from searchapp.judgements import service
from searchapp.judgements.service import Judgement

router = APIRouter(tags=["judgements"], route_class=ProblemRoute,
                   dependencies=[Depends(principal)])


def _out(j: Judgement) -> s.JudgementOut:
    return s.JudgementOut(id=j.id, corpus=j.corpus, kind=j.kind, query=j.query, a=j.a, b=j.b,
                          label=j.label, source=j.source, created_at=j.created_at,
                          updated_at=j.updated_at)


@router.post("/corpora/{name}/judgements", response_model=s.JudgementOut, status_code=201,
             summary="Add a judgement", dependencies=[Depends(writer)])
def add_judgement(body: s.JudgementIn, name: Name, app: AppDep) -> s.JudgementOut:
    return _out(service.add(app, name, label=body.label, query=body.query, doc=body.doc,
                            a=body.a, b=body.b, source="api"))


@router.get("/corpora/{name}/judgements", response_model=s.JudgementList,
            summary="List a corpus' judgements")
def list_judgements(name: Name, app: AppDep,
                    kind: Annotated[Literal["query", "pair"] | None, Query()] = None,
                    limit: Annotated[int, Query(ge=1, le=service.MAX_PAGE)] = 100,
                    cursor: Annotated[str | None, Query(pattern=r"^[0-9]{1,18}$")] = None,
                    ) -> s.JudgementList:
    page = service.page_judgements(app, name, kind, int(cursor or 0), limit)
    return s.JudgementList(judgements=[_out(j) for j in page.judgements],
                           next_cursor=None if page.next_after is None else str(page.next_after))


@router.delete("/corpora/{name}/judgements/{judgement_id}", response_model=s.JudgementOut,
               summary="Take a judgement back", dependencies=[Depends(writer)])
def delete_judgement(name: Name, judgement_id: Annotated[int, Path(ge=1)],
                     app: AppDep) -> s.JudgementOut:
    return _out(service.remove(app, name, judgement_id))
