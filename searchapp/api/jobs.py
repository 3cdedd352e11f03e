"""Jobs, models and snapshots (backups kept in ``DATA_DIR/backups``).

    GET  /jobs                      recent jobs, newest first
    GET  /jobs/{id}                 one job: status, progress, rate and time left, result;
                                    an ingest's files not read (``failures``: path, reason,
                                    kind)
    POST /jobs/{id}/cancel          cancel a queued or running job
    GET  /models                    the models the app knows, with their metrics
    GET  /snapshots                 the backups kept, newest first
    POST /snapshots                 start a backup job (202, the job)
    GET  /snapshots/{name}          download one (a tar with its manifest)

Example:
    >>> "/snapshots/{name}" in [r.path for r in router.routes]
    True
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import FileResponse

from searchapp.api import schemas as s
from searchapp.api.deps import AppDep, principal, queued, writer
from searchapp.api.problems import ProblemRoute
from searchapp.intake.report import problems_of
from searchapp.jobs import queue

router = APIRouter(route_class=ProblemRoute, dependencies=[Depends(principal)])
JobId = Annotated[int, Path(ge=1, le=2**62, examples=[1])]
SnapshotName = Annotated[str, Path(min_length=1, max_length=200,
                                   examples=["searchapp-20261124T101502Z.tar"])]


def utc(moment: datetime | None) -> datetime | None:
    """A stored time (naive, UTC) as an aware one: RFC 3339 with its offset in the JSON.

    Example:
        >>> utc(datetime(2026, 11, 24, 10, 15)).isoformat()
        '2026-11-24T10:15:00+00:00'
    """
    return None if moment is None else moment.replace(tzinfo=UTC)


def job_out(job: queue.JobView) -> s.JobOut:
    return s.JobOut(id=job.id, kind=job.kind, status=job.status,
                    progress_done=job.progress_done, progress_total=job.progress_total,
                    message=job.message, error=job.error, cancel_requested=job.cancel_requested,
                    created_at=utc(job.created_at), started_at=utc(job.started_at),
                    finished_at=utc(job.finished_at), payload=dict(job.payload or {}),
                    result=job.result,
                    failures=[s.FileProblem(**p) for p in problems_of(job)])


@router.get("/jobs", response_model=s.JobList, tags=["jobs"], summary="Recent jobs")
def list_jobs(request: Request, app: AppDep, limit: Annotated[int, Query(ge=1, le=500)] = 20
              ) -> s.JobList:
    jobs = queue.recent(app.db, limit)
    queued(request, app, next((j.id for j in jobs if j.status == "queued"), None))
    return s.JobList(jobs=[job_out(j) for j in jobs])


@router.get("/jobs/{job_id}", response_model=s.JobOut, tags=["jobs"], summary="One job")
def get_job(request: Request, job_id: JobId, app: AppDep) -> s.JobOut:
    job = queue.get(app.db, job_id)
    queued(request, app, job.id if job.status == "queued" else None)
    return job_out(job)


@router.post("/jobs/{job_id}/cancel", response_model=s.JobOut, tags=["jobs"],
             summary="Cancel a job", dependencies=[Depends(writer)])
def cancel_job(job_id: JobId, app: AppDep) -> s.JobOut:
    return job_out(queue.cancel(app.db, job_id))


@router.get("/models", response_model=s.ModelList, tags=["models"], summary="Known models")
def list_models(app: AppDep) -> s.ModelList:
    from searchapp.embedding.models import list_models as known

    return s.ModelList(models=[
        s.ModelOut(name=m.name, source=m.source, status=m.status,
                   base=str(m.card.get("base_model", "")),
                   objective=str(m.card.get("objective", "")), metrics=dict(m.metrics))
        for m in known(app.settings)])


@router.get("/snapshots", response_model=s.SnapshotList, tags=["snapshots"],
            summary="Backups kept on the server")
def list_snapshots(app: AppDep) -> s.SnapshotList:
    from searchapp.backups.service import list_snapshots as kept

    return s.SnapshotList(snapshots=[s.SnapshotOut(**vars(x)) for x in kept(app)])


@router.post("/snapshots", response_model=s.JobOut, status_code=202, tags=["snapshots"],
             summary="Start a backup", dependencies=[Depends(writer)])
def start_backup(request: Request, app: AppDep) -> s.JobOut:
    from searchapp.backups.service import request_backup

    job_id = request_backup(app)
    queued(request, app, job_id)
    return job_out(queue.get(app.db, job_id))


@router.get("/snapshots/{name}", tags=["snapshots"], summary="Download a backup",
            response_class=FileResponse,
            responses={200: {"content": {"application/x-tar": {
                "schema": {"type": "string", "format": "binary"}}},
                "description": "the archive: a tar whose manifest.json lists its files"}})
def download_snapshot(name: SnapshotName, app: AppDep) -> FileResponse:
    from searchapp.backups.service import snapshot_path

    path = snapshot_path(app, name)
    return FileResponse(path, media_type="application/x-tar", filename=name)
