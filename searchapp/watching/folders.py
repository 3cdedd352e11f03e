"""Watched folders as every front end sees them: add, list with status, pause, resume, remove.

The list lives in the database (``store.watched_folders``) and survives restarts;
the worker's keeper (``watching.keeper``) does the syncing. A folder is named by
its id or its path (``watch pause ~/notes``). Removing a folder stops the
watching only: the corpus keeps its documents.

Example:
    >>> folder = add_watch(app, Path("~/notes"), "notes", include=["*.md"])  # doctest: +SKIP
    >>> [f["state"] for f in list_watches(app)]                              # doctest: +SKIP
    ['watching']
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from searchapp.context import App
from searchapp.corpora.service import validate_corpus_name
from searchapp.embedding.models import model_path
from searchapp.errors import AlreadyExistsError, WatchedFolderNotFoundError, WatchError
from searchapp.intake.folder_check import Identity, under
from searchapp.store import repo
from searchapp.store import watched_folders as rows
from searchapp.store.schema import utcnow
from searchapp.watching.availability import identity_of, unavailable

ROOTS_VARIABLE = "SEARCHAPP_WATCH_ROOTS"


def allowed_roots(env: Mapping[str, str] | None = None) -> list[Path]:
    """The folders under which the browser and the API may add watched folders
    (``SEARCHAPP_WATCH_ROOTS``, separated by ``:``); none when unset. The CLI, run by
    whoever owns the machine, may watch any folder: a browser or an API key must not make
    the server read ``/etc``.

    Example:
        >>> allowed_roots({"SEARCHAPP_WATCH_ROOTS": "/srv/docs:/home/ann"})
        [PosixPath('/srv/docs'), PosixPath('/home/ann')]
    """
    env = os.environ if env is None else env
    raw = env.get(ROOTS_VARIABLE) or ""
    return [Path(os.path.expanduser(p)).resolve() for p in raw.split(":") if p.strip()]


def add_watch(app: App, folder: Path | str, corpus: str, include: Sequence[str] = (),
              exclude: Sequence[str] = (), roots: Sequence[Path] | None = None) -> dict:
    """Watch ``folder`` into ``corpus`` (made if new); returns the folder's status.

    Refused: a path that is not a readable folder, the data folder or one around it
    (the app's own writes would never stop syncing), a folder the corpus watches
    already, and (``roots`` given: the browser and the API) a folder outside them.
    """
    path = Path(os.path.expanduser(str(folder))).resolve()
    _check_path(app, path, roots)
    for glob in (*include, *exclude):
        if not glob.strip():
            raise WatchError("An --include or --exclude pattern is empty; give a glob such as "
                             "'*.md' or 'drafts/*'.")
    with app.db.session() as s:
        existing = repo.find_corpus(s, corpus)
        name = existing.name if existing else validate_corpus_name(corpus)
        model = existing.model_name if existing else app.settings.model
        model_path(model, app.settings)  # an unknown model fails before anything is stored
        corpus_row = repo.get_or_create_corpus(s, name, model)
        if any(f.path == str(path) and f.corpus == name for f in rows.list_folders(s)):
            raise AlreadyExistsError(f"Corpus {name!r} watches {path} already; "
                                     "`searchapp watch list` shows it.")
        row = rows.add_folder(s, corpus_row.id, str(path), list(include), list(exclude),
                              identity_of(str(path), under_roots=roots is not None))
    return status(row)


def _check_path(app: App, path: Path, roots: Sequence[Path] | None) -> None:
    """What a folder must pass to be watched (added, or resumed after a restore): under
    ``roots`` when given, a readable folder reached without a link, not the data folder."""
    if roots is not None and not under(str(path), roots):
        where = ", ".join(map(str, roots)) or "none: SEARCHAPP_WATCH_ROOTS is not set"
        raise WatchError(f"Cannot watch {path} from here: the app may watch folders under "
                         f"{where}. Add it with `searchapp watch add` on the server, or "
                         "set SEARCHAPP_WATCH_ROOTS.")
    reason = unavailable(str(path), None)
    if reason:
        raise WatchError(f"Cannot watch {path}: {reason.split(';')[0]}.")
    data = Path(app.settings.data_dir).resolve()
    if path == data or data.is_relative_to(path) or path.is_relative_to(data):
        raise WatchError(f"Cannot watch {path}: it holds the app's data folder ({data}) or "
                         "lies inside it; watch a folder beside it.")


def list_watches(app: App) -> list[dict]:
    """Every watched folder with its status (``status``), by corpus then path."""
    with app.db.session() as s:
        return [status(row) for row in rows.list_folders(s)]


def find_watch(app: App, ref: str | int) -> rows.FolderRow:
    """The folder with id ``ref``, or whose path is ``ref`` (``~`` expanded, resolved)."""
    with app.db.session() as s:
        if str(ref).isdigit():
            found = rows.get_folder(s, int(ref))
            if found:
                return found
        path = str(Path(os.path.expanduser(str(ref))).resolve())
        matches = [f for f in rows.list_folders(s) if f.path == path]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise WatchError(f"{path} is watched by {len(matches)} corpora; name it by its id "
                         f"({', '.join(str(f.id) for f in matches)}).")
    raise WatchedFolderNotFoundError(str(ref))


def set_paused(app: App, ref: str | int, paused: bool,
               roots: Sequence[Path] | None = None) -> dict:
    """Pause or resume a folder; its status after.

    Resuming checks the folder again: from the browser or the API (``roots`` given) it
    must lie under the roots, as when it is added; a folder a backup brought (restored
    paused, its identity unknown here) passes every check of ``add_watch`` and its
    identity is recorded now, as it is when a folder is added.
    """
    folder = find_watch(app, ref)
    values: dict = {}
    if not paused:
        if roots is not None and not under(folder.path, roots):
            raise WatchError(f"Cannot resume {folder.path} from here: it lies outside "
                             f"{', '.join(map(str, roots)) or 'SEARCHAPP_WATCH_ROOTS (not set)'}"
                             "; resume it with `searchapp watch resume` on the server.")
        if not Identity.parse(folder.device).known:
            path = Path(folder.path)
            if str(path.resolve()) != folder.path:
                raise WatchError(f"Cannot resume {folder.path}: the path leads elsewhere "
                                 f"({path.resolve()}); stop watching it and add the folder "
                                 "you mean.")
            _check_path(app, path, roots)
            values = dict(device=identity_of(folder.path, under_roots=roots is not None),
                          available=True, reason=None)
    with app.db.session() as s:
        rows.set_paused(s, folder.id, paused)
        if values:
            rows.write_status(s, folder.id, **values)
        return status(rows.get_folder(s, folder.id))


def remove_watch(app: App, ref: str | int) -> dict:
    """Stop watching a folder; the corpus keeps its documents. Returns its last status."""
    folder = find_watch(app, ref)
    with app.db.session() as s:
        rows.remove_folder(s, folder.id)
    return status(folder)


def state_of(row: rows.FolderRow) -> str:
    """One word: paused, unavailable, syncing (a job in flight) or watching."""
    if row.paused:
        return "paused"
    if not row.available:
        return "unavailable"
    return "syncing" if row.job_id else "watching"


def ago(when: datetime | None, now: datetime | None = None) -> str | None:
    """How long ago, in words.

    Example:
        >>> ago(datetime(2026, 1, 1, 12, 0, 0), datetime(2026, 1, 1, 12, 3, 5))
        '3 min ago'
    """
    if when is None:
        return None
    seconds = max(0, int(((now or utcnow()) - when).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit} ago"
    return f"{seconds} s ago"


def status(row: rows.FolderRow) -> dict:
    """A folder's settings and status as JSON-ready values (the CLI, the API and the page)."""
    now = utcnow()
    held = row.lease_owner if row.lease_until and row.lease_until > now else None
    return {"id": row.id, "corpus": row.corpus, "path": row.path, "include": row.include,
            "exclude": row.exclude, "state": state_of(row), "paused": row.paused,
            "available": row.available, "reason": row.reason,
            "files": {"seen": row.files_seen, "in_step": row.files_in_step,
                      "waiting": row.files_waiting, "failed": row.files_failed},
            "failures": row.failures, "last_change": row.last_change,
            "last_change_at": _iso(row.last_change_at),
            "last_change_ago": ago(row.last_change_at, now),
            "last_sync_at": _iso(row.last_sync_at), "last_sync_ago": ago(row.last_sync_at, now),
            "job": row.job_id, "worker": held}


def _iso(when: datetime | None) -> str | None:
    return when.isoformat(timespec="seconds") + "Z" if when else None
