"""``searchapp backup`` and ``searchapp restore``: an archive while the app runs, and back.

Example:
    $ searchapp backup --out nightly.tar
    $ searchapp restore nightly.tar --data-dir /srv/searchapp-restored
    $ searchapp restore nightly.tar --check
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from searchapp.cli import common
from searchapp.cli.output import output_path, print_json
from searchapp.errors import SearchAppError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``backup`` and ``restore`` to the command parser."""
    c = sub.add_parser("backup", help="write a backup archive (database, fine-tuned models, "
                                      "manifest with checksums) while the app runs")
    c.add_argument("--out", required=True, help="the archive to write, e.g. nightly.tar")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=backup)

    c = sub.add_parser("restore", help="check a backup archive and restore it into a folder")
    c.add_argument("archive")
    c.add_argument("--data-dir", help="the folder to restore into (new or empty)")
    c.add_argument("--force", action="store_true",
                   help="replace a non-empty folder (it is kept, renamed, beside it)")
    c.add_argument("--database-url", help="a PostgreSQL backup: the empty database to "
                                          "restore it into")
    c.add_argument("--check", action="store_true", help="only verify the archive")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=restore)


def backup(args: argparse.Namespace) -> int:
    from searchapp.backups.service import backup as run_backup

    out = output_path(args.out)
    made = run_backup(common.open_app(), out)
    if args.json:
        print_json({"path": str(made.path), "manifest": made.manifest})
    else:
        print(made.describe())
    return 0


def restore(args: argparse.Namespace) -> int:
    from searchapp.backups import service
    from searchapp.backups.trust import describe as describe_watched

    if args.check:
        checked = service.inspect(Path(args.archive))
        manifest = checked.manifest
        if args.json:
            print_json({**manifest, "database": checked.contents and checked.contents.as_dict(),
                        "watched_folders": [asdict(w) for w in checked.watched]})
        else:
            holds = f"; its database holds {checked.contents.describe()}" \
                if checked.contents else f", schema {manifest['schema_version']}"
            print(f"{args.archive}: intact; {len(manifest['members'])} files{holds}, made "
                  f"{manifest.get('created_at')}.")
            if line := describe_watched(checked.watched, restored=False):
                print(line)
        return 0
    if not args.data_dir:
        raise SearchAppError("Say where to restore: searchapp restore FILE --data-dir DIR "
                             "(or --check to only verify it).")
    done = service.restore(Path(args.archive), Path(args.data_dir), force=args.force,
                           database_url=args.database_url)
    counted = done.contents  # what the restored database holds, counted there
    if args.json:
        print_json({"data_dir": str(done.data_dir), "replaced": done.replaced,
                    "restored": counted and counted.as_dict(), "manifest": done.manifest,
                    "watched_folders_paused": [asdict(w) for w in done.watched]})
        return 0
    if counted is not None:
        print(f"Restored {counted.describe()} into {done.data_dir} (backed up "
              f"{done.manifest.get('created_at')}).")
        for c in counted.corpora:
            print(f"  {c.name}: {service.plural(c.documents, 'document')}")
    else:
        print(f"Restored the PostgreSQL database and {done.data_dir} (backed up "
              f"{done.manifest.get('created_at')}).")
    if done.replaced:
        print(f"The folder that was there is kept as {done.replaced}.")
    if line := describe_watched(done.watched, restored=True):
        print(line)
    settings = done.manifest.get("settings")
    settings = {k: v for k, v in settings.items() if v is not None} \
        if isinstance(settings, dict) else {}
    if settings:
        print("Settings at the backup: " + ", ".join(
            f"SEARCHAPP_{k.upper()}={v}" for k, v in settings.items()))
    print(f"Start it with SEARCHAPP_DATA_DIR={done.data_dir}; indexes are rebuilt from the "
          "database at the first search.")
    return 0
