"""Files into a corpus, and the originals back: documents as people keep them.

    POST /corpora/{name}/files                  upload files or archives (multipart, field
                                                ``files``, repeated; ``sync=true`` also removes
                                                what earlier uploads added whose files are
                                                gone, never another source's documents): an
                                                ``ingest`` job, answered 202 with the job
    GET  /corpora/{name}/originals/{id}         a document's original file, as ingested

Example:
    >>> sorted(r.path for r in router.routes)
    ['/corpora/{name}/files', '/corpora/{name}/originals/{doc_id:path}']
"""

from __future__ import annotations

import shutil
from typing import Annotated

from fastapi import APIRouter, Depends, File, Form, Request, UploadFile
from starlette.responses import Response

from searchapp.api import schemas as s
from searchapp.api.corpora import DocPathId, Name
from searchapp.api.deps import AppDep, principal, queued, writer
from searchapp.api.jobs import job_out
from searchapp.api.problems import ProblemRoute
from searchapp.config import max_upload_bytes
from searchapp.corpora import documents as docs
from searchapp.intake.staging import stage_uploads
from searchapp.intake.way_in import ingest
from searchapp.jobs import queue
from searchapp.web.originals import download_name, original_response

router = APIRouter(tags=["files"], route_class=ProblemRoute, dependencies=[Depends(principal)])


@router.post("/corpora/{name}/files", response_model=s.JobOut, status_code=202,
             summary="Add files (documents or archives) to a corpus",
             dependencies=[Depends(writer)])
def add_files(request: Request, name: Name, app: AppDep,
              files: Annotated[list[UploadFile], File(description="documents or archives")],
              sync: Annotated[bool, Form()] = False) -> s.JobOut:
    staged = stage_uploads(app.settings.work_dir, [(f.filename or "upload", f.file)
                                                   for f in files], max_upload_bytes())
    try:
        job_id = ingest(app, name, sync=sync, staged=staged).job_id
    except BaseException:
        shutil.rmtree(staged.folder, ignore_errors=True)
        raise
    queued(request, app, job_id)
    return job_out(queue.get(app.db, job_id))


@router.get("/corpora/{name}/originals/{doc_id:path}", summary="A document's original file",
            response_class=Response)
def get_original(name: Name, doc_id: DocPathId, app: AppDep) -> Response:
    path, doc = docs.original_of(app, name, doc_id)
    return original_response(path, download_name(doc.id))
