"""Files, folders and archives into a corpus: the ``ingest`` job, incremental and resumable.

One way through: file → reader → parts → documents → store → embed job; no
stage reads a file twice. ``request_ingest`` queues the job with the paths to
read (a folder or file of the CLI where it lies, or an upload kept in the work
folder until the job ends). The job compares each file with the store by its
path and SHA-256:

- unchanged (same path, same hash): not read again;
- new or changed: read in an extraction process (``extract_pool``: a file that
  hangs or exhausts memory costs that file only), its documents written in one
  transaction per batch (a document is stored whole or not at all), its original
  kept once per hash (``originals``);
- ``sync``: documents whose file is gone are removed; where a removed file's
  content reappears under another path, its judgements follow it;
- a file that cannot be read is one line of the report (which file, why, what to
  do) and the rest goes on; nothing stored before changes for it. A file that is
  there but unreadable now (permissions, a folder that cannot be listed) or still
  being written (``settle``) is never taken for gone: ``sync`` keeps its documents;
- two documents that would share an id (an e-mail's attachment and an archive member
  with the same path, uploads whose names are one once written as ids) are both kept:
  the later one in the ingest, or the one not stored under it before, gets an id of its
  own (``report (2).pdf``, ``names.distinct``) and a note of the report names both;
- ``include`` / ``exclude``: glob patterns (``fnmatch``) a file's relative path or
  name must match / must not match (a watched folder's filters).

Killed at any point, the job runs again from the start and finds what it had
stored unchanged, so it goes on where it stopped. While it reads, each batch it
stores is embedded by a thread beside it (``embed_alongside``), so search opens
with the first batch; it ends by queuing the embed job for whatever is left.

Example:
    >>> job_id = request_ingest(app, "manuals", [Path("~/manuals")], sync=True)  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import logging
import os
import shutil
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

from searchapp.context import App
from searchapp.corpora.embed_alongside import EmbedAlongside
from searchapp.corpora.language_advice import advice
from searchapp.corpora.names import distinct
from searchapp.corpora.originals import OriginalChangedError, keep
from searchapp.corpora.service import model_for, request_embed, validate_corpus_name
from searchapp.errors import ConfigError, IngestError, JobCancelled
from searchapp.intake.extract import FileResult, extract_file, file_meta
from searchapp.intake.extract_pool import ExtractionPool
from searchapp.intake.folder_check import check_synced, folder_identity
from searchapp.intake.formats.document import Limits
from searchapp.intake.formats.registry import document_type, listing
from searchapp.intake.inputs import (
    NOT_READ,
    STOPPED,
    UNREADABLE,
    WAITING,
    InputFile,
    InputLimits,
    Skipped,
    is_archive,
    iter_rooted,
)
from searchapp.intake.job_payloads import IngestPayload
from searchapp.intake.left_out import filtered, not_read, readable
from searchapp.intake.report import IngestReport
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.jobs.tasks import fault_point
from searchapp.store import repo, sources
from searchapp.store.documents import StoredFile
from searchapp.store.judgement_rows import move_judgements

log = logging.getLogger(__name__)
BATCH_DOCUMENTS = 64  # documents written per transaction
BATCH_CHARS = 4_000_000  # or fewer, when their texts are long
ORPHAN_AFTER = 3_600  # seconds before an upload no job names is swept


# what a move changes in a file's metadata ("modified" stays: a move keeps the file's date,
# and a document's own date, from its properties, is not the file's)
_PATH_KEYS = ("path", "folder", "file")


def _same_reader(old: str, new: str) -> bool:
    """Whether both names are read the same way (a .txt renamed .md is read again)."""
    return document_type(old) == document_type(new)


def document_limits(env: dict | None = None) -> Limits:
    """What one file may cost: ``SEARCHAPP_MAX_PAGES`` pages or slides (default 2,000).

    Example:
        >>> document_limits({"SEARCHAPP_MAX_PAGES": "50"}).max_pages
        50
    """
    env = os.environ if env is None else env
    raw = (env.get("SEARCHAPP_MAX_PAGES") or "").strip()
    if not raw:
        return Limits()
    if not raw.isdigit() or int(raw) < 1:
        raise ConfigError(f"SEARCHAPP_MAX_PAGES={raw!r} is not a positive whole number; "
                          "e.g. 2000.")
    return Limits(max_pages=int(raw))


def type_words() -> str:
    """The documents we read, in words, for refusals and help (made from the format registry).

    Example:
        >>> type_words().startswith("PDF (.pdf), Word (.docx)")
        True
    """
    return f"{listing('document')}, or an archive of them (.zip, .tar, .tar.gz, ...)"


def accepts(path: str) -> bool:
    """Whether a path inside a folder or archive is a document type we read."""
    return document_type(path) is not None


def matches(path: str, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> bool:
    """Whether a relative path passes the glob filters: one of ``include`` (when any is given)
    and none of ``exclude``, each tried on the whole path and on the file name.

    Example:
        >>> matches("notes/a.md", include=["*.md"]), matches("drafts/b.md", exclude=["drafts/*"])
        (True, False)
    """
    name = path.rsplit("/", 1)[-1]

    def hit(globs: Sequence[str]) -> bool:
        return any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(name, g) for g in globs)

    return (not include or hit(include)) and not hit(exclude)


def request_ingest(app: App, corpus: str, paths: Sequence[Path], sync: bool = False,
                   model: str | None = None, staged: Path | None = None,
                   overlap: bool = True, options: dict | None = None) -> int:
    """Queue the ``ingest`` job for ``paths`` (files, folders, archives) into ``corpus``.

    ``staged``: a folder of uploaded files the job owns and removes when it ends.
    ``overlap``: embed each stored batch while the next files are read
    (``embed_alongside``); the embed job queued at the end does what is left.
    ``options``: ``include``/``exclude`` globs, ``settle`` seconds, ``device`` and ``watch``
    (the id of the watched folder that asked), carried in the payload.
    Refused before queuing: a path that does not exist, a model that is unknown,
    a corpus name that breaks the rule, or a corpus whose model differs from ``model``.
    """
    missing = [str(p) for p in paths if not Path(p).exists()]
    if missing:
        raise IngestError(f"No file at {missing[0]}: check the path and the file name.")
    watched = bool((options or {}).get("watch"))  # a watched folder may be empty now
    files = [Path(p) for p in paths if not Path(p).is_dir()]
    if files and not staged and not any(readable(f.name) for f in files) and \
            not any(Path(p).is_dir() for p in paths):  # nothing here could be read: say so now
        raise IngestError(f"{files[0].name} {not_read(files[0].name)}; "
                          "nothing was queued.")
    for folder in (Path(p) for p in paths if Path(p).is_dir() and not watched):
        if not _has_documents(folder):
            raise IngestError(f"{folder} has no file of a type we read ({type_words()}); "
                              "nothing was queued.")
    with app.db.session() as s:
        existing = repo.find_corpus(s, corpus)
        name = existing.name if existing else validate_corpus_name(corpus)
        model_name = model_for(app.settings, name, existing and existing.model_name, model)
        repo.get_or_create_corpus(s, name, model_name)  # listed while its files are read
    sweep_uploads(app, keep=staged)
    # a watched folder's path is its stored one (resolved when added), never resolved again:
    # a link put in its place must not lead the walk elsewhere (``folder_check``)
    fields = {"sync": bool(sync), "staged": str(staged) if staged else None,
              "overlap": bool(overlap), **(options or {})}  # an option may set overlap too
    payload = IngestPayload(
        name, [str(Path(p) if watched else Path(p).resolve()) for p in paths], model_name,
        **fields)
    return submit(app.db, payload)


def sweep_uploads(app: App, keep: Path | None = None) -> int:
    """Remove the uploaded files of ingest jobs that ended without reading them (cancelled
    while queued, or failed): every folder under ``work/uploads`` but ``keep`` that no
    queued or running ingest job names and that is older than ``ORPHAN_AFTER`` seconds
    (an upload being staged right now by another request is not yet named by its job).
    Returns how many went."""
    folder = app.settings.work_dir / "uploads"
    if not folder.is_dir():
        return 0
    wanted = {job.payload.get("staged") for job in queue.active(app.db, "ingest")}
    wanted.add(str(keep) if keep else None)
    gone = 0
    for staged in folder.iterdir():
        old = staged.lstat().st_mtime < time.time() - ORPHAN_AFTER
        if old and str(staged) not in wanted and staged.is_dir() and not staged.is_symlink():
            shutil.rmtree(staged, ignore_errors=True)
            gone += 1
    return gone


def ingest_task(ctx, payload: IngestPayload) -> dict:
    """The ``ingest`` job: read, compare, store, report; then queue the embedding."""
    app, name = ctx.app, payload.corpus
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, payload.model)
        corpus_id = corpus.id
        stored = repo.stored_files(s, corpus_id)
    paths = [Path(p) for p in payload.paths]
    run = _Run(app, ctx, corpus_id, IngestReport(name), stored, sync=payload.sync,
               sources=source_keys(paths, staged=bool(payload.staged)))
    run.report.notes += payload.notes  # an upload's names made distinct
    for refused in payload.skipped:  # uploaded files not of a type we read: named, not read
        run.report.skipped += 1
        run.report.problems.append({"path": refused.get("path", ""),
                                    "reason": refused.get("reason", NOT_READ),
                                    "kind": "skipped"})
    total = _count_files(paths)
    work = app.settings.work_dir / "ingest" / f"job-{ctx.job_id}"
    shutil.rmtree(work, ignore_errors=True)  # a killed run's unpacked files
    include, exclude = payload.include or (), payload.exclude or ()

    def wanted(path: str) -> bool | str:
        """True, or why not (``left_out``): not a type we read, or the folder's filters."""
        if not accepts(path):
            return not_read(path)
        return matches(path, include, exclude) or filtered(include, exclude)

    try:
        check_synced(paths, payload)  # a watched folder: still the one added, or nothing
        with _alongside(app, name, ctx, payload, run) as run.alongside:
            run.read(iter_rooted(paths, work, InputLimits.from_env(), wanted,
                                 settle=float(payload.settle or 0),
                                 names=_upload_names(payload),
                                 identity=folder_identity(payload)), total)
        run.report_read()
        if payload.sync:
            check_synced(paths, payload)  # unmounted or replaced while read: nothing goes
            run.remove_gone()
    except JobCancelled:  # the uploaded files go with the job; what was stored stays
        if payload.staged:
            shutil.rmtree(payload.staged, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = run.report
    if report.added or report.changed or report.removed or report.documents:
        report.embed_job = request_embed(app, name, new_rows=True)
        report.notes += [a for a in (advice(app, name),) if a]  # mostly not English: say so
    if payload.staged:
        shutil.rmtree(payload.staged, ignore_errors=True)
    return report.as_dict()


def source_keys(paths: Sequence[Path], staged: bool = False) -> list[str]:
    """The source of each given path (``store/sources.py``): everything uploaded is the
    corpus' uploads; a folder is that folder (the command line's and a watch's alike); a
    file or archive given on its own is that file.

    Example:
        >>> source_keys([Path("/tmp/x.zip")]), source_keys([Path("/tmp/x.zip")], staged=True)
        (['path:/tmp/x.zip'], ['upload'])
    """
    if staged:
        return [sources.UPLOAD] * len(paths)
    return [sources.folder_source(str(p)) if p.is_dir() else sources.path_source(str(p))
            for p in paths]


def _upload_names(payload: IngestPayload) -> dict[str, str]:
    """{path of an uploaded file on disk: the name it is known by} (``staging``)."""
    if not payload.staged:
        return {}
    folder = Path(payload.staged).resolve()
    return {str(folder / disk): name for disk, name in payload.names.items()}


def _alongside(app: App, name: str, ctx, payload: IngestPayload, run: _Run):
    """What embeds the batches while files are still read (the payload's ``overlap``, on
    by default; off, the embed job after the ingest does it all)."""
    if payload.overlap:
        return EmbedAlongside(app, name, getattr(ctx, "checkpoint", None),
                              waiting=lambda: run.report_embedding())
    return contextlib.nullcontext()


def _has_documents(folder: Path) -> bool:
    """Whether a folder holds, at any depth, a file we read or an archive (links not followed)."""
    return any(accepts(f) or is_archive(f) for _, _, files in os.walk(folder) for f in files)


def _count_files(paths: Sequence[Path]) -> int:
    """Files to look at, for the progress bar (0 where an archive must be read to count)."""
    total = 0
    for path in paths:
        if path.is_dir():
            total += sum(len(files) for _, _, files in os.walk(path))
        elif is_archive(path.name):
            return 0
        else:
            total += 1
    return total


class _Run:
    """One ingest's state: what the store held, what was seen, the batch being written.

    Everything is kept per source (``sources``: one key per given path): a file is
    compared with the documents its own source brought, a sync removes only those, and
    a document another source brought is never overwritten or removed (the file is
    reported instead). Documents read from files before sources were recorded
    (``sources.LEGACY_FILES``) are taken over by the first source that reads their path.
    """

    def __init__(self, app: App, ctx, corpus_id: int, report: IngestReport,
                 stored: dict[str, StoredFile], sync: bool = False,
                 sources: Sequence[str] = ()):
        self.app, self.ctx, self.corpus_id, self.report = app, ctx, corpus_id, report
        self.sync, self.sources = sync, list(sources)
        self.by_path: dict[tuple[str, str], list[str]] = {}  # (source, path) -> ids
        self.by_hash: dict[tuple[str, str], set[str]] = {}  # (source, sha256) -> paths
        self.legacy: dict[str, list[str]] = {}  # path -> ids no source has taken over yet
        for external_id, row in stored.items():
            path = row.meta.get("path", external_id)
            if _claimable(row.source):
                self.legacy.setdefault(path, []).append(external_id)
                continue
            self.by_path.setdefault((row.source, path), []).append(external_id)
            self.by_hash.setdefault((row.source, row.original), set()).add(path)
        self.maybe_moved: list[tuple[str, InputFile, tuple]] = []  # new paths, stored bytes
        self.stored = stored
        self.seen: set[tuple[str, str]] = set()  # (source, path) found: not gone
        self.kept_under: list[tuple[str, str]] = []  # folders not listed ("" the root)
        self.stopped = False  # the limit of files was reached: nothing is taken for gone
        self.new_hashes: dict[tuple[str, str], str] = {}  # (source, sha256) -> id, added
        self.taken_over: dict[str, list[str]] = {}  # source -> ids it took over, unchanged
        self.batch: list = []
        self.stale: list[str] = []  # ids of changed files' documents that are no more
        self.done = self.total = 0
        self.alongside: EmbedAlongside | None = None
        self.owners: dict[str, tuple[str, str]] = {}  # id -> (source, path), this ingest

    def own(self, source: str, path: str) -> list[str]:
        """The ids of the documents ``source`` brought for the file at ``path`` (taking
        over those read from it before sources were recorded)."""
        ids = self.by_path.get((source, path))
        if ids is None and path in self.legacy:
            ids = self.by_path[(source, path)] = self.legacy.pop(path)
            for external_id in ids:
                self.by_hash.setdefault((source, self.stored[external_id].original),
                                        set()).add(path)
            self.taken_over.setdefault(source, []).extend(ids)
        return ids or []

    def unchanged(self, source: str, item: InputFile) -> bool:
        ids = self.own(source, item.path)
        return bool(ids) and all(self.stored[i].original == item.sha256 for i in ids)

    def todo(self, inputs: Iterator[tuple[int, InputFile | Skipped]]
             ) -> Iterator[tuple[str, InputFile, tuple]]:
        limits = document_limits()
        for number, item in inputs:
            source = self.sources[number]
            if isinstance(item, Skipped):
                self._skipped(source, item)
                self._tick()
                continue
            self.seen.add((source, item.path))
            if self.unchanged(source, item):
                self.report.unchanged += 1
                item.discard()
                self._tick()
                continue
            moved = self._may_have_moved(source, item)
            if item.pin is not None:  # read from a copy of the bytes hashed, never the path
                pinned = item.pin()
                if isinstance(pinned, Skipped):
                    self._skipped(source, pinned)
                    self._tick()
                    continue
                item = dataclasses.replace(pinned, note=item.note)
            args = (str(item.local), item.path, item.size, item.mtime, item.sha256, limits)
            if moved:
                self.maybe_moved.append((source, item, args))  # decided once all are seen
                continue
            kept = self._keep(item, args)
            if kept is not None:
                yield source, item, kept

    def _keep(self, item: InputFile, args: tuple) -> tuple | None:
        """Keep the file's original first, verified against its hash, and read the text
        from that copy: the hash, the text and the original are of the same bytes. A file
        replaced or rewritten since it was hashed is left for the next ingest (its
        documents stay as they were)."""
        try:
            kept = keep(self.app.settings.originals_dir, item.local, item.sha256)
        except OriginalChangedError as exc:
            item.discard()
            self.report.waiting += 1
            self.report.problems.append({"path": item.path, "reason": str(exc),
                                         "kind": WAITING})
            self._tick()
            return None
        return (str(kept), *args[1:])

    def _may_have_moved(self, source: str, item: InputFile) -> bool:
        """A new path holding bytes stored under another path: a rename or move when that
        path turns out gone (known only at the end of the walk), else a copy to read."""
        return (self.sync and item.pin is not None and not self.own(source, item.path)
                and bool(self.by_hash.get((source, item.sha256))))

    def moved_files(self) -> list[tuple[str, InputFile, tuple]]:
        """Once every file is seen: the new paths whose bytes' old path is gone keep that
        path's documents, renamed (no reading, no embedding; judgements follow); the
        others (copies) are returned to be read."""
        to_read, renames, moves = [], [], {}
        for source, item, args in self.maybe_moved:
            old = next((p for p in sorted(self.by_hash[(source, item.sha256)])
                        if self._gone(source, p) and _same_reader(p, item.path)), None)
            plan = None if old is None else self._renamed(source, old, item)
            if plan is None:
                kept = self._keep(item, args)
                if kept is not None:
                    to_read.append((source, item, kept))
                continue
            self.by_hash[(source, item.sha256)].discard(old)
            renames += plan
            moves.update({before: after for before, after, _ in plan})
            self.by_path[(source, item.path)] = [after for _, after, _ in plan]
            del self.by_path[(source, old)]
            self.report.moved += 1
            item.discard()  # a move: its copy is not read
            self._tick()
        if renames:
            with self.app.db.session() as s:
                corpus = _corpus(s, self.corpus_id)
                repo.rename_documents(s, corpus, renames)
                self.report.moved_judgements += move_judgements(s, self.corpus_id, moves)
        self.maybe_moved = []
        return to_read

    def _gone(self, source: str, path: str) -> bool:
        return ((source, path) in self.by_path and (source, path) not in self.seen
                and not self._kept(source, path) and not self.stopped)

    def _renamed(self, source: str, old: str, item: InputFile
                 ) -> list[tuple[str, str, dict]] | None:
        """(old id, new id, new metadata) for each document of the file at ``old`` now at
        ``item.path``; None when an id does not derive from the path or the new id is
        taken (read it instead)."""
        plan = []
        for external_id in self.by_path[(source, old)]:
            if not external_id.startswith(old):
                return None
            meta = self.stored[external_id].meta
            fresh = file_meta(item.path, meta.get("type", ""), item.size, item.mtime,
                              item.sha256)
            plan.append((external_id, item.path + external_id[len(old):],
                         {**meta, **{k: fresh[k] for k in _PATH_KEYS if k in fresh}}))
        with self.app.db.session() as s:
            if repo.owners(s, self.corpus_id, [new for _, new, _ in plan]):
                return None
        return plan

    def _skipped(self, source: str, item: Skipped) -> None:
        """Count a file left out; one that is there but not readable now keeps its documents."""
        problem = {"path": item.path, "reason": item.reason, "kind": item.keep or "skipped"}
        if item.keep:
            self.seen.add((source, item.path))
        if item.under is not None:
            self.kept_under.append((source, item.under))
        if item.keep == WAITING:
            self.report.waiting += 1
        elif item.keep == UNREADABLE:
            self.report.failed += 1
        else:
            self.stopped = self.stopped or item.keep == STOPPED
            self.report.skipped += 1
        self.report.problems.append(problem)

    def _kept(self, source: str, path: str) -> bool:
        """Whether a stored path lies in a folder that could not be listed this time."""
        return any(src == source and (under == "" or path.startswith(under + "/"))
                   for src, under in self.kept_under)

    def read(self, inputs: Iterator[tuple[int, InputFile | Skipped]], total: int) -> None:
        self.total = total
        with ExtractionPool(on_progress=self._reading) as pool:
            self._extract(pool, self.todo(inputs))
            self._extract(pool, iter(self.moved_files()))  # copies: read after all
            self._flush()

    def _extract(self, pool: ExtractionPool,
                 todo: Iterator[tuple[str, InputFile, tuple]]) -> None:
        pending = {}

        def tasks():
            for source, item, args in todo:
                pending[(source, item.path)] = (source, item)
                yield (source, item.path), args

        for key, result in pool.map_unordered(extract_file, tasks()):
            source, item = pending.pop(key)
            if isinstance(result, Exception):
                self.report.failed += 1
                self.report.problems.append({"path": item.path, "reason": _reason(result),
                                             "kind": "failed"})
            else:
                self._take(source, item, result)
            item.discard()
            self._tick()

    def _take(self, source: str, item: InputFile, result: FileResult) -> None:
        old_ids = set(self.own(source, item.path))
        docs = [self._claim(source, item, old_ids, d) for d in result.documents]
        new_ids = {d.external_id for d in docs}
        if old_ids:
            self.report.changed += 1
        else:
            self.report.added += 1
            self.new_hashes.setdefault((source, item.sha256), item.path)
        self.by_path[(source, item.path)] = sorted(new_ids)
        self.stale += sorted(old_ids - new_ids)
        self.batch += [dataclasses.replace(d, source=source, original=item.sha256)
                       for d in docs]
        self.report.notes += result.notes + ([item.note] if item.note else [])
        if len(self.batch) >= BATCH_DOCUMENTS or \
                sum(len(d.text) for d in self.batch) >= BATCH_CHARS:
            self._flush()

    def _claim(self, source: str, item: InputFile, own: set[str], doc):
        """``doc`` of the file ``item``, with an id of its own when another holds that id
        (another file of this ingest, another file of this source, another source, a row):
        nothing another holds is overwritten, both are kept, and the report names both."""
        path = item.path
        holder = self._holder(source, path, own, doc.external_id, item.sha256)
        if holder is not None:
            fresh = distinct(doc.external_id, _Taken(self, source, path, own))
            self.report.notes.append(
                f"{fresh}: a document of {path} would have the id {doc.external_id!r}, which "
                f"is held by {holder}; both are kept, this one as {fresh!r}.")
            doc = dataclasses.replace(doc, external_id=fresh)
        self.owners[doc.external_id] = (source, path)
        return doc

    def _holder(self, source: str, path: str, own: set[str], external_id: str,
                sha256: str | None = None) -> str | None:
        """Who else holds ``external_id`` (in words), or None when it is free for the file
        at ``path`` of ``source``: its own; stored before sources were recorded; or the
        same file (path and bytes) of a folder or file that is no longer there (a folder
        moved, then added from its new place, takes its documents along)."""
        if external_id in own:
            return None
        found = self.owners.get(external_id)
        if found is not None:
            return None if found == (source, path) else f"{found[1]} ({sources.describe(found[0])})"
        with self.app.db.session() as s:
            held = repo.owners(s, self.corpus_id, [external_id]).get(external_id)
        if held is None:
            return None
        row = self.stored.get(external_id)
        where = row.meta.get("path", external_id) if row else external_id
        if where == path and (_claimable(held) or (
                row is not None and row.original == sha256 and _gone_from_disk(held))):
            return None
        return f"{where} ({sources.describe(held)})"

    def _flush(self) -> None:
        stale, taken_over = self.stale, self.taken_over
        if not self.batch and not stale and not taken_over:
            return
        with self.app.db.session() as s:
            corpus = _corpus(s, self.corpus_id)
            writer = repo.DocumentWriter(s, corpus)
            writer.add(_distinct(self.batch))
            writer.finish()
            if stale:
                repo.delete_by_external_id(s, corpus, stale)
            for source, ids in taken_over.items():
                repo.take_over(s, self.corpus_id, ids, source)
        fault_point("ingest batch committed")
        self.report.documents += len(self.batch)
        self.batch, self.stale, self.taken_over = [], [], {}
        if self.alongside is not None:
            self.alongside.stored()

    def remove_gone(self) -> None:
        """``sync``: the documents of this ingest's sources whose files were not found this
        time go (never another source's); judgements on a removed file whose content came
        back under another path follow it."""
        if self.stopped:
            self.report.notes.append("Nothing was removed: the ingest stopped at its limit of "
                                     "files, so files it did not reach are not gone.")
            return
        mine = set(self.sources)
        gone = [key for key in self.by_path if key[0] in mine and key not in self.seen
                and not self._kept(*key)]
        if not gone:
            return
        moves = {}
        for source, path in gone:
            for external_id in self.by_path[(source, path)]:
                row = self.stored.get(external_id)
                added = self.new_hashes.get((source, row.original)) if row else None
                if added and external_id == path:
                    moves[external_id] = added
        with self.app.db.session() as s:
            corpus = _corpus(s, self.corpus_id)
            repo.delete_by_external_id(s, corpus, [i for key in gone for i in self.by_path[key]])
            self.report.moved_judgements = move_judgements(s, self.corpus_id, moves)
        self.report.removed = len(gone)

    def _tick(self) -> None:
        self.done += 1
        self._report()

    def report_read(self) -> None:
        """Every file read (and, with ``overlap``, what was read embedded): the last line."""
        self._report(force=True)

    def report_embedding(self) -> None:
        """Every file is read; the batches stored last are being embedded."""
        self._report(" · embedding the last documents read", force=True)

    def _reading(self, key: tuple[str, str], done: int, total: int) -> None:
        """A file's reader is in a long step (OCR): say which file and how far it is."""
        path = key[1]
        self._report(f" · OCR of {path}: page {done:,} of {total:,}")

    def _report(self, detail: str = "", force: bool = False) -> None:
        total = max(self.total, self.done) if self.total else 0
        self.ctx.progress(self.done, total, force=force, message=f"Reading files: {self.done:,}"
                          + (f" of {total:,}" if total else "")
                          + f" ({self.report.added + self.report.changed:,} read, "
                          f"{self.report.unchanged:,} unchanged, {self.report.failed:,} failed)"
                          + (f" · {self.alongside.embedded:,} documents embedded"
                             if self.alongside and self.alongside.embedded else "")
                          + detail)


class _Taken:
    """The ids another file or source holds, as ``names.distinct`` asks: ``id in taken``."""

    def __init__(self, run: _Run, source: str, path: str, own: set[str]):
        self.run, self.source, self.path, self.own = run, source, path, own

    def __contains__(self, external_id: object) -> bool:
        return self.run._holder(self.source, self.path, self.own, str(external_id)) is not None


def _gone_from_disk(source: str) -> bool:
    """Whether a folder or file source names a path that is not there any more."""
    kind, _, where = source.partition(":")
    return kind in ("folder", "path") and bool(where) and not os.path.lexists(where)


def _claimable(source: str | None) -> bool:
    return sources.claimable(source)


def _corpus(s, corpus_id: int):
    from searchapp.store.schema import Corpus

    return s.get(Corpus, corpus_id)


def _distinct(docs: list) -> list:
    """The last document of each id (a path given twice in one batch is written once)."""
    return list({d.external_id: d for d in docs}.values())


def _reason(exc: BaseException) -> str:
    """A failure as the report's line: a SearchAppError's own words; anything else is
    logged with its traceback and named in one line."""
    from searchapp.errors import SearchAppError

    if isinstance(exc, SearchAppError):
        return str(exc)
    log.error("reading a file failed", exc_info=exc)
    return f"could not be read ({type(exc).__name__}: {exc})"
