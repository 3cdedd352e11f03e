"""Back up the app while it runs, restore into a folder, list and find the snapshots.

A backup holds the database copied at one moment (``store/snapshot.py``: the
SQLite backup API, or ``pg_dump`` on PostgreSQL) with everything it stores
(corpora, documents, vectors, jobs, stored results, API key hashes, and the
judgements once that store is merged), the fine-tuned model folders of
``DATA_DIR/models``, the original files of ingested documents (``DATA_DIR/originals``),
and a manifest: SHA-256 and size of each member, the schema
version, where it came from, the non-secret settings, and each corpus with its
counts and generation as the copy holds them. Index files are not included: they
are derived caches, rebuilt from the database at the first search after a
restore (always correct; for a large corpus that first search takes the build).

``restore`` checks the whole archive first (``store/archive.verify``: truncated,
altered, foreign or newer-schema archives are refused with one line; an original
whose bytes are not the SHA-256 that names it too, whatever the manifest says:
``backups.trust``), writes
into a new folder beside the target, checks the database copy (``PRAGMA
integrity_check``), pauses every watched folder the database lists (each named in
the result, resumed by a person after checking it), and only then puts the folder
in place. A non-empty target
is refused without ``force``; with it, the old folder is kept, renamed.

Example:
    >>> import tempfile
    >>> from searchapp.config import Settings
    >>> from searchapp.context import App
    >>> app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": tempfile.mkdtemp()}))
    >>> made = backup(app, app.settings.backup_dir / "first.tar")
    >>> sorted(made.manifest["members"])
    ['database/searchapp.db']
    >>> restore(made.path, Path(tempfile.mkdtemp()) / "copy").manifest["kind"]
    'backup'
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from searchapp import __version__
from searchapp.backups import contents, trust
from searchapp.backups.contents import Contents
from searchapp.backups.job_payloads import BackupPayload
from searchapp.base import data_lock
from searchapp.base.private_files import private_dir
from searchapp.context import App
from searchapp.errors import BackupError, DataFolderBusyError, NotFoundError
from searchapp.jobs import queue
from searchapp.jobs.kinds import submit
from searchapp.store import archive, snapshot
from searchapp.store.schema import SCHEMA_VERSION

DATABASE_SQLITE = contents.DATABASE_SQLITE
DATABASE_POSTGRES = contents.DATABASE_POSTGRES
SNAPSHOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,150}\.tar")
STEPS = 3  # database, models, archive


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 corpus``, ``2 corpora``, ``3,025 documents``.

    Example:
        >>> plural(1, "corpus", "corpora"), plural(3025, "document")
        ('1 corpus', '3,025 documents')
    """
    return f"{n:,} {one if n == 1 else many or one + 's'}"


@dataclass(frozen=True)
class BackupResult:
    path: Path
    manifest: dict

    def describe(self) -> str:
        corpora = self.manifest.get("corpora", [])
        size = self.path.stat().st_size
        models = len(self.manifest["members"]) - 1
        return (f"Backed up {plural(len(corpora), 'corpus', 'corpora')} ("
                f"{plural(sum(c['documents'] for c in corpora), 'document')}) and "
                f"{plural(models, 'model file')} to {self.path} ({size / 2**20:.1f} MiB, "
                f"schema {self.manifest['schema_version']}).")


@dataclass(frozen=True)
class RestoreResult:
    data_dir: Path
    manifest: dict
    replaced: Path | None  # where the folder that was there went (with --force)
    contents: Contents | None = None  # counted in the restored SQLite database
    watched: tuple[trust.Watched, ...] = ()  # the watched folders it lists, restored paused


@dataclass(frozen=True)
class Checked:
    """An archive checked as restore would: its manifest, and what its database holds
    (counted in a temporary copy; None for a PostgreSQL dump, which only pg_restore reads)."""

    manifest: dict
    contents: Contents | None
    watched: tuple[trust.Watched, ...] = ()  # the watched folders its database lists


@dataclass(frozen=True)
class SnapshotInfo:
    """A backup archive in ``DATA_DIR/backups``, described by its manifest."""

    name: str
    size: int
    created_at: str
    kind: str
    schema_version: int | None
    corpora: list[dict]


def public_settings(app: App) -> dict:
    """The settings worth knowing when restoring (never a password or its hash).

    Example:
        >>> sorted(public_settings(app))                                  # doctest: +SKIP
        ['busy_timeout', 'device', 'max_upload_bytes', 'model', 'passage_tokens', ...]
    """
    s = app.settings
    return {"model": s.model, "device": s.device, "precision": s.precision,
            "max_upload_bytes": s.max_upload_bytes, "busy_timeout": s.busy_timeout,
            "passage_tokens": s.passage_tokens, "ray_address": s.ray_address}


def model_files(models_dir: Path, prefix: str = "models") -> list[tuple[str, Path]]:
    """(archive name, path) of every regular file under the fine-tuned models' folder (or,
    with ``prefix="originals"``, the ingested files' originals).

    Example:
        >>> model_files(Path("/nonexistent"))
        []
    """
    if not models_dir.is_dir():
        return []
    out = []
    for path in sorted(models_dir.rglob("*")):
        if path.is_file() and not path.is_symlink() and not path.name.endswith(".part"):
            out.append((f"{prefix}/{path.relative_to(models_dir).as_posix()}", path))
    return out


def backup(app: App, out: Path, progress: Callable[[int, str], None] | None = None
           ) -> BackupResult:
    """Write a backup archive of ``app`` to ``out`` while the app and workers keep running.

    ``progress(step, message)`` is told each of the ``STEPS`` steps as it starts.

    Example:
        >>> backup(app, Path("nightly.tar")).describe()                  # doctest: +SKIP
        'Backed up 2 corpora (3,038 documents) and 0 other files to nightly.tar (...).'
    """
    out = Path(out).expanduser().resolve()
    if out.is_dir():
        raise BackupError(f"{out} is a folder; give a file name, e.g. {out / 'backup.tar'}.")
    if not out.parent.is_dir():
        raise BackupError(f"The folder {out.parent} does not exist; create it first.")
    tell = progress or (lambda step, message: None)
    url = app.settings.database_url
    app.settings.ensure_dirs()
    with tempfile.TemporaryDirectory(dir=app.settings.work_dir, prefix="backup-") as tmp:
        tell(1, "Copying the database at one moment")
        path = snapshot.sqlite_path(url)
        if path is not None:
            copy = snapshot.copy_sqlite(path, Path(tmp) / "searchapp.db", app.db.busy_seconds)
            schema, corpora = snapshot.corpora_in(copy)
            files = [(DATABASE_SQLITE, copy)]
        elif url.startswith("postgresql"):
            dump = Path(tmp) / "searchapp.pgdump"
            schema, corpora = snapshot.dump_postgres(url, dump)
            files = [(DATABASE_POSTGRES, dump)]
        else:
            raise BackupError(f"Cannot back up the database at {snapshot.redacted(url)}: only "
                              "SQLite files and PostgreSQL are supported (an in-memory "
                              "database has nothing to keep).")
        tell(2, "Adding the fine-tuned models and the original files")
        files += model_files(app.settings.models_dir)
        files += model_files(app.settings.originals_dir, "originals")
        tell(3, f"Writing {len(files)} files with their checksums")
        manifest = archive.write(out, files, {
            "kind": "backup", "searchapp_version": __version__,
            "schema_version": schema or SCHEMA_VERSION,
            "source": {"database": "sqlite" if path is not None else "postgresql",
                       "url": snapshot.redacted(url), "data_dir": str(app.settings.data_dir),
                       "host": socket.gethostname()},
            "settings": public_settings(app),
            "corpora": [c.as_dict() for c in corpora]})
    return BackupResult(out, manifest)


def check(archive_path: Path) -> dict:
    """Verify an archive without restoring it: its manifest, or BackupError naming the fault.
    Everything restore checks is checked (see ``inspect``).

    Example:
        >>> check(Path("nightly.tar"))["schema_version"]                  # doctest: +SKIP
        4
    """
    return inspect(archive_path).manifest


def inspect(archive_path: Path) -> Checked:
    """Check an archive as restore will: every member against the manifest, then the
    database itself, copied to a temporary folder, opened and counted.

    Example:
        >>> inspect(Path("nightly.tar")).contents.describe()              # doctest: +SKIP
        '2 corpora (3,038 documents), schema 6'
    """
    archive_path = Path(archive_path).expanduser()
    manifest = _verified(archive_path)
    if DATABASE_SQLITE not in manifest["members"]:
        return Checked(manifest, None)
    with tempfile.TemporaryDirectory(prefix="searchapp-check-") as tmp:
        copy = Path(tmp) / "searchapp.db"
        _extracting(archive_path, manifest, lambda name: copy if name == DATABASE_SQLITE
                    else None, Path(tmp))
        counted = contents.inspect_sqlite(copy, archive_path.name, SCHEMA_VERSION,
                                          manifest.get("schema_version"))
        con = sqlite3.connect(f"file:{copy}?mode=ro", uri=True)
        try:
            watched = trust.listed_sqlite(con)
        finally:
            con.close()
        return Checked(manifest, counted, watched)


def _named(archive_path: Path) -> Callable[[str, str], None]:
    """The check of each member's bytes against the hash its name gives (the originals)."""
    return lambda name, digest: trust.original_named(archive_path.name, name, digest)


def _verified(archive_path: Path) -> dict:
    """The archive's members against its manifest (and each original's bytes against the
    hash that names it), and the manifest's own shape."""
    manifest = archive.verify(archive_path, SCHEMA_VERSION, _named(archive_path))
    contents.database_member(archive_path.name, manifest["members"])
    contents.check_corpora_list(archive_path.name, manifest)
    return manifest


def _extracting(archive_path: Path, manifest: dict, place: Callable[[str], Path | None],
                where: Path) -> None:
    """``archive.extract``, with a full or failing disk said in one line."""
    try:
        archive.extract(archive_path, manifest, place, _named(archive_path))
    except OSError as exc:
        raise BackupError(f"Cannot write into {where}: {exc.strerror or exc} (a full disk?); "
                          "nothing was restored, the folder there is untouched.") from None


def restore(archive_path: Path, data_dir: Path, force: bool = False,
            database_url: str | None = None) -> RestoreResult:
    """Restore a verified archive into ``data_dir`` (see the module docstring).

    A PostgreSQL backup goes into the empty database at ``database_url``
    (``pg_restore``); the models go into ``data_dir`` as always.

    Example:
        >>> restore(Path("nightly.tar"), Path("/srv/searchapp-data"))     # doctest: +SKIP
    """
    archive_path = Path(archive_path).expanduser()
    manifest = _verified(archive_path)  # the database itself is checked once extracted
    data_dir = Path(data_dir).expanduser().resolve()
    if data_dir.exists() and not data_dir.is_dir():
        raise BackupError(f"{data_dir} is a file; restore into a folder.")
    occupied = data_dir.is_dir() and any(p.name != data_lock.LOCK_DIR for p in data_dir.iterdir())
    if occupied and not force:
        raise BackupError(f"{data_dir} is not empty; restore into a new folder, or add --force "
                          "to replace it (the folder there now is kept, renamed).")
    with contextlib.ExitStack() as held:
        if data_dir.is_dir():  # held alone until the new folder is in place
            if occupied:
                _refuse_live(data_dir)
            try:
                held.enter_context(data_lock.exclusive(data_dir))
            except DataFolderBusyError as exc:
                raise BackupError(str(exc)) from None
        return _restore_into(archive_path, manifest, data_dir, database_url)


def _restore_into(archive_path: Path, manifest: dict, data_dir: Path,
                  database_url: str | None) -> RestoreResult:
    """Write the archive into a folder beside ``data_dir``, check it, swap it in."""
    members = manifest["members"]
    if DATABASE_POSTGRES in members and not (database_url or "").startswith("postgresql"):
        raise BackupError("This backup is of a PostgreSQL database: give the empty database to "
                          "restore it into with --database-url postgresql://...")
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = data_dir.parent / f".{data_dir.name}.restoring-{os.getpid()}"
    private_dir(staging)
    try:
        def place(name: str) -> Path | None:
            if name == DATABASE_SQLITE:
                return staging / "searchapp.db"
            if name == DATABASE_POSTGRES:
                return staging / "work" / "restore.pgdump"
            if name.startswith(("models/", "originals/")):
                return staging / name
            return None

        _extracting(archive_path, manifest, place, staging)
        counted = None
        if DATABASE_SQLITE in members:
            counted = contents.inspect_sqlite(staging / "searchapp.db", archive_path.name,
                                              SCHEMA_VERSION, manifest.get("schema_version"))
            watched = trust.pause_all(trust.sqlite_url(staging / "searchapp.db"))
        else:
            snapshot.restore_postgres(staging / "work" / "restore.pgdump", database_url or "")
            (staging / "work" / "restore.pgdump").unlink()
            watched = trust.pause_all(database_url or "")
        for sub in ("models", "indexes", "work", "backups"):
            (staging / sub).mkdir(mode=0o700, exist_ok=True)
        replaced = None
        if data_dir.exists():
            stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
            replaced = data_dir.with_name(f"{data_dir.name}.replaced-{stamp}")
            data_dir.rename(replaced)
        staging.rename(data_dir)
    except BaseException:
        _remove_tree(staging)
        raise
    return RestoreResult(data_dir, manifest, replaced, counted, watched)


def _refuse_live(data_dir: Path) -> None:
    """A data folder a worker is using is not replaced under it."""
    from searchapp.jobs.worker import worker_pid_in

    pid = worker_pid_in(data_dir)  # alive while it holds its lock: never a recycled pid
    if pid is not None:
        raise BackupError(f"A worker (pid {pid}) is using {data_dir}; stop the app and its "
                          "worker first, then restore.")


def _remove_tree(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


# ---- snapshots in DATA_DIR/backups, for the API ----------------------------------------------
def new_snapshot_name(now: datetime | None = None) -> str:
    """``searchapp-20261124T101502Z.tar``.

    Example:
        >>> new_snapshot_name(datetime(2026, 11, 24, 10, 15, 2, tzinfo=UTC))
        'searchapp-20261124T101502Z.tar'
    """
    return f"searchapp-{(now or datetime.now(UTC)).strftime('%Y%m%dT%H%M%SZ')}.tar"


def list_snapshots(app: App) -> list[SnapshotInfo]:
    """The archives in ``DATA_DIR/backups`` (backups and pre-upgrade copies), newest first;
    a file that is not one is left out.

    Example:
        >>> [s.name for s in list_snapshots(app)]                        # doctest: +SKIP
        ['searchapp-20261124T101502Z.tar', 'before-schema-4-20261101T080000Z.tar']
    """
    folder = app.settings.backup_dir
    found = []
    for path in folder.glob("*.tar") if folder.is_dir() else []:
        if not SNAPSHOT_NAME.fullmatch(path.name):
            continue
        try:
            manifest = archive.read_manifest(path)
        except BackupError:
            continue
        found.append(SnapshotInfo(path.name, path.stat().st_size,
                                  str(manifest.get("created_at", "")),
                                  str(manifest.get("kind", "backup")),
                                  manifest.get("schema_version"),
                                  list(manifest.get("corpora", []))))
    return sorted(found, key=lambda s: (s.created_at, s.name), reverse=True)


def snapshot_path(app: App, name: str) -> Path:
    """The file of snapshot ``name`` (one ``list_snapshots`` names: never a path elsewhere).

    Example:
        >>> snapshot_path(app, "../searchapp.db")                         # doctest: +SKIP
        Traceback (most recent call last):
        searchapp.errors.NotFoundError: No snapshot named '../searchapp.db'. ...
    """
    known = {s.name for s in list_snapshots(app)}
    if name not in known:
        listing = ", ".join(sorted(known)) or "(none yet)"
        raise NotFoundError(f"No snapshot named {name!r}. Snapshots: {listing}.")
    return app.settings.backup_dir / name


def request_backup(app: App) -> int:
    """Queue a ``backup`` job writing a new snapshot to ``DATA_DIR/backups``; its id. A
    backup already queued or running is returned instead of a second one.

    Example:
        >>> request_backup(app)                                            # doctest: +SKIP
        31
    """
    for job in queue.recent(app.db, 200):
        if job.kind == "backup" and not job.finished:
            return job.id
    return submit(app.db, BackupPayload(name=new_snapshot_name()))


def backup_task(ctx, payload: BackupPayload) -> dict:
    """The ``backup`` job: a snapshot named in the payload, with progress by step."""
    name = str(payload.name or new_snapshot_name())
    if not SNAPSHOT_NAME.fullmatch(name):
        raise BackupError(f"Invalid snapshot name {name!r}.")
    folder = ctx.app.settings.backup_dir
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def tell(step: int, message: str) -> None:
        ctx.progress(step - 1, STEPS, message, force=True)

    made = backup(ctx.app, folder / name, tell)
    ctx.progress(STEPS, STEPS, "Done.", force=True)
    return {"snapshot": name, "size": made.path.stat().st_size,
            "corpora": made.manifest["corpora"], "schema_version": made.manifest["schema_version"]}
