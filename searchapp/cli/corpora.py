"""``searchapp ingest``, ``embed`` and ``corpora``: files into corpora, vectors, listing.

Example:
    $ searchapp ingest questions.csv --corpus faq --wait
    $ searchapp corpora
"""

from __future__ import annotations

import argparse
import sys

from searchapp.cli import common
from searchapp.cli.common import positive_int
from searchapp.cli.output import print_json, print_table
from searchapp.errors import InvalidParameterError, SearchAppError
from searchapp.intake.formats.registry import labels, listing


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``ingest``, ``embed`` and ``corpora`` to the command parser."""
    c = sub.add_parser(
        "ingest", help=f"add documents ({labels('document')}; files, folders, .zip/.tar "
        f"archives) or a table ({labels('table')})",
        description=f"One table file ({listing('table')}, each also gzipped): a document per "
        "row (a .txt: per line). Anything else (documents: "
        f"{listing('document')}; several files, folders, archives): a document per file, its "
        "id the path relative to the folder or archive root; ingested again, unchanged files "
        "are skipped.")
    c.add_argument("path", nargs="+")
    c.add_argument("--corpus", required=True)
    c.add_argument("--whole-files", action="store_true",
                   help="read a .txt as one document (default: one document per line)")
    c.add_argument("--sync", action="store_true",
                   help="also remove the documents whose files are gone")
    c.add_argument("--json", action="store_true", help="print the ingest's report as JSON")
    c.add_argument("--text-column", action="append",
                   help="the column to search (default: guessed); repeat it to join several "
                   "columns, row by row, into the text (--text-column title --text-column body)")
    c.add_argument("--id-column")
    c.add_argument("--model", help="model for a new corpus (default: SEARCHAPP_MODEL)")
    c.add_argument("--wait", action="store_true", help="return once embedded and indexed")
    c.set_defaults(func=ingest)

    c = sub.add_parser("embed", help="embed the documents of a corpus that lack a vector")
    c.add_argument("--corpus", required=True)
    c.add_argument("--wait", action="store_true", help="return once embedded and indexed")
    c.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local: this worker encodes; ray: actors on a Ray cluster (pip install "
                   "-e '.[ray]')")
    c.add_argument("--address",
                   help="with --engine ray: auto (the cluster `ray start` made here), "
                   "ray://HOST:10001, or local (a cluster in this process); default "
                   "SEARCHAPP_RAY_ADDRESS, else auto")
    c.add_argument("--actors", type=positive_int,
                   help="with --engine ray: encoder actors (default: one per GPU, else one "
                   "per 4 CPUs)")
    c.add_argument("--cpus-per-actor", type=positive_int,
                   help="with --engine ray: CPUs (torch threads) per actor")
    c.add_argument("--split-long", action="store_true",
                   help="embed again, in passages, long documents embedded before passages "
                   "existed (a corpus made before schema 3)")
    c.set_defaults(func=embed)

    c = sub.add_parser("corpora", help="list corpora; `corpora delete NAME` removes one")
    c.add_argument("action", nargs="?", choices=["list", "delete"], default="list")
    c.add_argument("name", nargs="?")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=corpora)


def ingest(args: argparse.Namespace) -> int:
    """``searchapp ingest``: any input through the one way in (``intake.way_in``); with
    ``--wait``, its jobs run here to their end."""
    from pathlib import Path

    from searchapp.intake.way_in import ingest as ingest_input

    app = common.open_app()
    text = args.text_column[0] if args.text_column and len(args.text_column) == 1 \
        else args.text_column
    went = ingest_input(app, args.corpus, [Path(p) for p in args.path],
                        whole_files=args.whole_files, sync=args.sync, text_column=text,
                        id_column=args.id_column, model=args.model,
                        on_table=lambda table: _warn_about_columns(table, text))
    if went.path == "table":
        return _table_done(app, args, went.summary)
    return _files_done(app, args, went.job_id)


def _warn_about_columns(table, text) -> None:
    from searchapp.intake.columns import column_stats

    for stats in column_stats(table.preview(), [text] if isinstance(text, str) else text or []):
        if stats.warning:
            print(f"warning: {stats.warning}.", file=sys.stderr)


def _table_done(app, args: argparse.Namespace, summary) -> int:
    print(summary.describe())
    if summary.job_id is None:
        print("Nothing new to embed.")
        return 0
    if not args.wait:
        print(f"Embedding job {summary.job_id} queued; `searchapp worker` runs it.")
        return 0
    common.run_job(app, "embed job")(summary.job_id)
    result = common.job_result(app, summary.job_id)
    print(f"Embedded and indexed {result.get('embedded', 0)} documents "
          f"in {result.get('seconds', 0)} s.")
    if result.get("split"):
        print(split_sentence(result["split"], result["passages"]))
    return 0


def _files_done(app, args: argparse.Namespace, job_id: int) -> int:
    """Files, folders and archives: the ``ingest`` job, run here with ``--wait``."""
    from searchapp.intake.files_job import IngestReport

    if not args.wait:
        print(f"Ingest job {job_id} queued; `searchapp worker` runs it "
              f"(`searchapp jobs` shows its progress).")
        return 0
    common.run_job(app, "ingest job")(job_id)
    report = IngestReport(**common.job_result(app, job_id))
    embedded = {}
    if report.embed_job is not None:
        common.run_job(app, "embed job")(report.embed_job)
        embedded = common.job_result(app, report.embed_job)
    if args.json:
        print_json({**report.as_dict(), "embedded": embedded.get("embedded", 0)})
        return 0
    for line in report.lines():
        print(line)
    if embedded.get("embedded"):
        print(f"Embedded and indexed {embedded.get('embedded', 0)} documents "
              f"({embedded.get('passages', 0):,} passages) in {embedded.get('seconds', 0)} s.")
    elif embedded and report.added + report.changed:  # done beside the reading
        print("The documents were embedded and indexed while they were read.")
    return 0


def split_sentence(split: int, passages: int) -> str:
    """What the embed job did with long documents, for ``ingest --wait`` and ``embed --wait``.

    Example:
        >>> split_sentence(1, 5)
        '1 document was longer than a passage and was split into 5 passages, each searchable.'
    """
    docs = "1 document was" if split == 1 else f"{split:,} documents were"
    return (f"{docs} longer than a passage and {'was' if split == 1 else 'were'} split into "
            f"{passages:,} passages, each searchable.")


def embed(args: argparse.Namespace) -> int:
    app = common.open_app()
    if args.split_long:
        job_id = _split_long(app, args)
        if job_id is None:
            return 0
    else:
        job_id = _request(app, args)
        if job_id is None:
            print(f"Every document of {args.corpus!r} is embedded already.")
            return 0
    if not args.wait:
        print(f"Embedding job {job_id} queued; `searchapp worker` runs it.")
        return 0
    common.run_job(app, "embed job")(job_id)
    result = common.job_result(app, job_id)
    if result.get("split"):
        print(split_sentence(result["split"], result["passages"]))
    return 0


def _split_long(app, args: argparse.Namespace) -> int | None:
    """Queue the embedding in passages of long documents embedded whole; None if there are none."""
    from searchapp.corpora.service import split_long

    if args.engine == "ray":
        raise InvalidParameterError("--split-long embeds on this machine's worker; leave "
                                    "out --engine ray.")
    renewed, job_id = split_long(app, args.corpus)
    if job_id is None:
        print(f"No document of {args.corpus!r} needs splitting: every long one is "
              "embedded in passages already.")
        return None
    docs = "1 long document" if renewed == 1 else f"{renewed:,} long documents"
    print(f"{docs} embedded before passages existed: embedding again in passages "
          "(until then found by words only).")
    return job_id


def _request(app, args: argparse.Namespace) -> int | None:
    """Queue the embed job for what is missing, here or on Ray; None when nothing is."""
    from searchapp.corpora.service import request_embed, request_ray_embed

    if args.engine == "ray":
        address = args.address or app.settings.ray_address or "auto"
        return request_ray_embed(app, args.corpus, address=address, actors=args.actors,
                                 cpus_per_actor=args.cpus_per_actor)
    return request_embed(app, args.corpus)


def corpora(args: argparse.Namespace) -> int:
    from searchapp.corpora.service import delete
    from searchapp.store import repo

    app = common.open_app()
    if args.action == "delete":
        if not args.name:
            raise SearchAppError("Say which corpus to delete: searchapp corpora delete NAME")
        delete(app, args.name)
        print(f"Deleted corpus {args.name!r}, its embeddings and index files.")
        return 0
    with app.db.session() as s:
        rows = [vars(c) for c in repo.summaries(s)]
    if args.json:
        print_json({"corpora": rows})
    elif not rows:
        print("No corpora yet. Add one: searchapp ingest FILE --corpus NAME")
    else:
        print_table(rows, ["name", "model_name", "documents", "embedded"])
    return 0
