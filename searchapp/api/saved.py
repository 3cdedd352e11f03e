"""Saved searches: the same list, add, run and remove as ``searchapp saved``.

    GET    /corpora/{name}/saved   the corpus' saved searches with "N new"
    POST   /corpora/{name}/saved   save a search (query as typed, mode, k, where, notify)
    GET    /saved/{id}             one saved search
    POST   /saved/{id}/run         its hits now, the new ones first and marked new
    POST   /saved/{id}/look        the same, and the watermark moves: the user has seen
                                   them (its "N new" goes to 0; a write)
    DELETE /saved/{id}             remove it with its news

Example:
    >>> "/saved/{saved_id}/look" in [r.path for r in router.routes]
    True
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path

from searchapp.api import schemas as s
from searchapp.api.deps import AppDep, principal, writer
from searchapp.api.problems import ProblemRoute
from searchapp.saved import service

router = APIRouter(route_class=ProblemRoute, dependencies=[Depends(principal)])
CorpusName = Annotated[str, Path(min_length=1, max_length=200, examples=["faq"])]
SavedId = Annotated[int, Path(ge=1, le=2**62, examples=[1])]


@router.get("/corpora/{name}/saved", response_model=s.SavedList, tags=["saved searches"],
            summary="A corpus' saved searches")
def list_saved(name: CorpusName, app: AppDep) -> dict:
    return {"saved": [v.as_json() for v in service.list_saved(app, name)]}


@router.post("/corpora/{name}/saved", response_model=s.SavedOut, status_code=201,
             tags=["saved searches"], summary="Save a search",
             dependencies=[Depends(writer)])
def add_saved(name: CorpusName, body: s.SavedIn, app: AppDep) -> dict:
    return service.save(app, name, body.name, body.query, mode=body.mode, k=body.k,
                        min_score=body.min_score, where=body.where,
                        webhook_url=body.webhook_url, desktop=body.desktop).as_json()


@router.get("/saved/{saved_id}", response_model=s.SavedOut, tags=["saved searches"],
            summary="One saved search")
def get_saved(saved_id: SavedId, app: AppDep) -> dict:
    return service.get_saved(app, saved_id).as_json()


@router.post("/saved/{saved_id}/run", response_model=s.SavedResultsOut,
             tags=["saved searches"], summary="Run a saved search")
def run_saved(saved_id: SavedId, app: AppDep) -> dict:
    return service.run(app, saved_id).as_json()


@router.post("/saved/{saved_id}/look", response_model=s.SavedResultsOut,
             tags=["saved searches"], summary="Open a saved search (its news seen)",
             dependencies=[Depends(writer)])
def look_saved(saved_id: SavedId, app: AppDep) -> dict:
    return service.run(app, saved_id, look=True).as_json()


@router.delete("/saved/{saved_id}", response_model=s.SavedOut, tags=["saved searches"],
               summary="Remove a saved search", dependencies=[Depends(writer)])
def remove_saved(saved_id: SavedId, app: AppDep) -> dict:
    return service.remove(app, saved_id).as_json()
