"""Watched folders: the same list, status and changes as ``searchapp watch``.

    GET    /folders              every watched folder with its status
    POST   /folders              watch a folder (under SEARCHAPP_WATCH_ROOTS) into a corpus
    GET    /folders/{id}         one folder's status
    POST   /folders/{id}/pause   stop syncing it for now
    POST   /folders/{id}/resume  sync it again
    DELETE /folders/{id}         stop watching it (the corpus keeps its documents)

Example:
    >>> "/folders/{folder_id}/pause" in [r.path for r in router.routes]
    True
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request

from searchapp.api import schemas as s
from searchapp.api.deps import AppDep, principal, services, writer
from searchapp.api.problems import ProblemRoute
from searchapp.watching import folders

router = APIRouter(route_class=ProblemRoute, dependencies=[Depends(principal)])
FolderId = Annotated[int, Path(ge=1, le=2**62, examples=[1])]


@router.get("/folders", response_model=s.FolderList, tags=["folders"],
            summary="Watched folders and their status")
def list_folders(app: AppDep) -> s.FolderList:
    return s.FolderList(folders=folders.list_watches(app))


@router.post("/folders", response_model=s.FolderOut, status_code=201, tags=["folders"],
             summary="Watch a folder", dependencies=[Depends(writer)])
def add_folder(body: s.FolderIn, request: Request, app: AppDep) -> dict:
    folder = folders.add_watch(app, body.path, body.corpus, body.include, body.exclude,
                               roots=folders.allowed_roots())
    services(request).start_worker(app)  # the worker keeps it in step: make sure one runs
    return folder


@router.get("/folders/{folder_id}", response_model=s.FolderOut, tags=["folders"],
            summary="One watched folder")
def get_folder(folder_id: FolderId, app: AppDep) -> dict:
    return folders.status(folders.find_watch(app, folder_id))


@router.post("/folders/{folder_id}/pause", response_model=s.FolderOut, tags=["folders"],
             summary="Pause a folder", dependencies=[Depends(writer)])
def pause_folder(folder_id: FolderId, app: AppDep) -> dict:
    return folders.set_paused(app, folder_id, True)


@router.post("/folders/{folder_id}/resume", response_model=s.FolderOut, tags=["folders"],
             summary="Resume a folder", dependencies=[Depends(writer)])
def resume_folder(folder_id: FolderId, app: AppDep) -> dict:
    return folders.set_paused(app, folder_id, False, roots=folders.allowed_roots())


@router.delete("/folders/{folder_id}", response_model=s.FolderOut, tags=["folders"],
               summary="Stop watching a folder", dependencies=[Depends(writer)])
def remove_folder(folder_id: FolderId, app: AppDep) -> dict:
    return folders.remove_watch(app, folder_id)
