"""Corpora and their documents: list, create, status, delete; upsert, get, delete by id.

In the manner of Qdrant's collections and points and Chroma's collections:
resources by name, batch operations, ids chosen by the client.

    GET    /corpora                          list with counts and generations
    POST   /corpora                          create an empty corpus
    GET    /corpora/{name}                   status: counts, generation, active jobs
    DELETE /corpora/{name}                   delete with its documents and index files
    PUT    /corpora/{name}/documents         upsert a batch by id (idempotent)
    POST   /corpora/{name}/documents/get     get a batch by id
    POST   /corpora/{name}/documents/delete  delete a batch by id
    GET    /corpora/{name}/documents/{id}    get one
    DELETE /corpora/{name}/documents/{id}    delete one

Example:
    >>> [r.path for r in router.routes][:2]
    ['/corpora', '/corpora']
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request

from searchapp.api import schemas as s
from searchapp.api.deps import AppDep, principal, queued, writer
from searchapp.api.problems import ProblemRoute
from searchapp.corpora import documents as docs
from searchapp.corpora import service
from searchapp.errors import DocumentNotFoundError
from searchapp.store import repo

router = APIRouter(tags=["corpora"], route_class=ProblemRoute,
                   dependencies=[Depends(principal)])
Name = Annotated[str, Path(min_length=1, max_length=200, examples=["faq"])]
DocPathId = Annotated[str, Path(min_length=1, max_length=500, examples=["q1"])]


def _out(status: service.CorpusStatus) -> s.CorpusOut:
    return s.CorpusOut(name=status.name, model=status.model, documents=status.documents,
                       embedded=status.embedded, generation=status.generation,
                       meta_columns=[str(c) for c in status.meta_columns],
                       active_jobs=status.active_jobs, ready=status.ready)


@router.get("/corpora", response_model=s.CorpusList, summary="List corpora")
def list_corpora(app: AppDep) -> s.CorpusList:
    with app.db.session() as session:
        names = repo.corpus_names(session)
    return s.CorpusList(corpora=[_out(service.corpus_status(app, n)) for n in names])


@router.post("/corpora", response_model=s.CorpusOut, status_code=201, summary="Create a corpus",
             dependencies=[Depends(writer)])
def create_corpus(body: s.CorpusCreate, app: AppDep) -> s.CorpusOut:
    return _out(service.create_corpus(app, body.name, body.model))


@router.get("/corpora/{name}", response_model=s.CorpusOut, summary="A corpus' status")
def corpus_status(name: Name, app: AppDep) -> s.CorpusOut:
    return _out(service.corpus_status(app, name))


@router.delete("/corpora/{name}", response_model=s.Deleted, summary="Delete a corpus",
               dependencies=[Depends(writer)])
def delete_corpus(name: Name, app: AppDep) -> s.Deleted:
    service.delete(app, name)
    return s.Deleted(deleted=name)


@router.put("/corpora/{name}/documents", response_model=s.UpsertOut,
            summary="Upsert documents by id", dependencies=[Depends(writer)])
def upsert_documents(request: Request, body: s.UpsertIn, name: Name,
                     app: AppDep) -> s.UpsertOut:
    done = docs.upsert(app, name, [docs.Doc(d.id, d.text, dict(d.meta)) for d in body.documents])
    queued(request, app, done.job_id)
    return s.UpsertOut(corpus=done.corpus, added=done.added, updated=done.updated,
                       metadata_updated=done.metadata_updated, unchanged=done.unchanged,
                       generation=done.generation, job_id=done.job_id)


def _doc(d: docs.StoredDocument) -> s.DocumentOut:
    return s.DocumentOut(id=d.id, text=d.text, meta=d.meta, embedded=d.embedded,
                         source=d.source)


@router.post("/corpora/{name}/documents/get", response_model=s.DocumentsOut,
             summary="Get documents by id")
def get_documents(body: s.IdsIn, name: Name, app: AppDep
                  ) -> s.DocumentsOut:
    found, missing = docs.get_many(app, name, body.ids)
    return s.DocumentsOut(documents=[_doc(d) for d in found], missing=missing)


@router.post("/corpora/{name}/documents/delete", response_model=s.DeleteOut,
             summary="Delete documents by id", dependencies=[Depends(writer)])
def delete_documents(body: s.IdsIn, name: Name, app: AppDep
                     ) -> s.DeleteOut:
    done = docs.delete(app, name, body.ids)
    return s.DeleteOut(corpus=done.corpus, deleted=done.deleted, missing=done.missing,
                       generation=done.generation)


@router.get("/corpora/{name}/documents/{doc_id:path}", response_model=s.DocumentOut,
            summary="Get one document")
def get_document(name: Name, doc_id: DocPathId, app: AppDep
                 ) -> s.DocumentOut:
    return _doc(docs.get(app, name, doc_id))


@router.delete("/corpora/{name}/documents/{doc_id:path}", response_model=s.DeleteOut,
               summary="Delete one document", dependencies=[Depends(writer)])
def delete_document(name: Name, doc_id: DocPathId,
                    app: AppDep) -> s.DeleteOut:
    done = docs.delete(app, name, [doc_id])
    if done.missing:
        raise DocumentNotFoundError(done.corpus, doc_id)
    return s.DeleteOut(corpus=done.corpus, deleted=done.deleted, missing=done.missing,
                       generation=done.generation)
