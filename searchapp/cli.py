"""``searchapp ...``: every capability without the browser.

Core errors (SearchAppError) become one line on stderr and exit code 1; no
traceback. Scripts rely on the forms and JSON shapes documented in the README.

Example:
    $ searchapp ingest questions.csv --corpus faq --wait
    $ searchapp search --corpus faq "how do I reset my password" -k 3 --json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from searchapp.errors import InvalidParameterError, OutputPathError, SearchAppError
from searchapp.private_files import restrict_umask

Handler = Callable[[argparse.Namespace], int]


def _app():
    from searchapp.context import App

    return App()


def _print_json(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, default=str))


def _print_table(rows: list[dict], columns: list[str]) -> None:
    if not rows:
        return
    widths = {c: max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in columns}
    print("  ".join(c.upper().ljust(widths[c]) for c in columns).rstrip())
    for r in rows:
        print("  ".join(str(r.get(c, "")).ljust(widths[c]) for c in columns).rstrip())


def _progress_printer(label: str):
    last = {"line": ""}

    def show(job) -> None:
        line = f"{label}: {job.status} {job.progress_done}/{job.progress_total}"
        if line != last["line"]:
            print(line, file=sys.stderr, flush=True)
            last["line"] = line

    return show


def output_path(value: str, flag: str = "--out") -> Path:
    """The file ``--out`` names, checked before any work: its folder exists, it is no folder.

    Checked first so a long job is not run only to end in a traceback at its
    last step; OutputPathError says what to change.
    """
    path = Path(value).expanduser()
    if not value.strip():
        raise OutputPathError(f"{flag} needs a file name, e.g. {flag} results.csv.")
    if path.is_dir():
        raise OutputPathError(f"{flag} {value}: that is a folder; give a file name inside it, "
                              f"e.g. {flag} {path / 'results.csv'}.")
    parent = path.parent
    if not parent.is_dir():
        raise OutputPathError(f"{flag} {value}: the folder {parent} does not exist; create it "
                              "first or choose another path.")
    if not os.access(parent, os.W_OK):
        raise OutputPathError(f"{flag} {value}: the folder {parent} is not writable; choose "
                              "another path.")
    return path


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Run ``write(tmp)`` on a temporary file beside ``path``, then rename it to ``path``.

    A failure (disk full, permissions) leaves an existing file at ``path`` as it
    was and no half-written file behind; it is reported as OutputPathError.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputPathError(f"Cannot write {path}: {exc.strerror or exc}.") from exc


def column_mapping(pairs: Sequence[str] | None) -> dict[str, str] | None:
    """``--column ROLE=COLUMN`` arguments as ``{role: column}`` (None when none were given).

    Example:
        >>> column_mapping(["sentence1=question", "score=sim"])
        {'sentence1': 'question', 'score': 'sim'}
    """
    mapping: dict[str, str] = {}
    for pair in pairs or []:
        role, sep, column = pair.partition("=")
        if not sep or not role.strip() or not column.strip():
            raise InvalidParameterError(
                f"--column {pair!r} must be ROLE=COLUMN, e.g. --column sentence1=question "
                "(roles: sentence1, sentence2, score, label, anchor, positive, negative).")
        mapping[role.strip()] = column.strip()
    return mapping or None


def wait_for_job(app, job_id: int, label: str) -> int:
    """Work the queue here until the job ends; exit code 0 only if it succeeded."""
    from searchapp.jobs.worker import run_until_done

    job = run_until_done(app, job_id, _progress_printer(label))
    if job.status != "succeeded":
        print(f"error: job {job.id} {job.status}: {job.error or job.message or ''}".rstrip(),
              file=sys.stderr)
        return 1
    return 0


# ---- commands -------------------------------------------------------------------
def cmd_ingest(args: argparse.Namespace) -> int:
    from searchapp.corpora import upload
    from searchapp.ingest import read_table

    app = _app()
    table = read_table(args.path)
    summary = upload(app, table, args.corpus, args.text_column, args.id_column,
                     model=args.model)
    print(summary.describe())
    if summary.job_id is None:
        print("Nothing new to embed.")
        return 0
    if not args.wait:
        print(f"Embedding job {summary.job_id} queued; `searchapp worker` runs it.")
        return 0
    code = wait_for_job(app, summary.job_id, f"embed job {summary.job_id}")
    if code == 0:
        from searchapp.jobs import queue

        result = queue.get(app.db, summary.job_id).result or {}
        print(f"Embedded and indexed {result.get('embedded', 0)} documents "
              f"in {result.get('seconds', 0)} s.")
        if result.get("split"):
            print(split_sentence(result["split"], result["passages"]))
    return code


def split_sentence(split: int, passages: int) -> str:
    """What the embed job did with long documents, for ``ingest --wait`` and ``embed --wait``.

    Example:
        >>> split_sentence(1, 5)
        '1 document was longer than a passage and was split into 5 passages, each searchable.'
    """
    docs = "1 document was" if split == 1 else f"{split:,} documents were"
    return (f"{docs} longer than a passage and {'was' if split == 1 else 'were'} split into "
            f"{passages:,} passages, each searchable.")


def cmd_embed(args: argparse.Namespace) -> int:
    from searchapp.corpora import embed, embed_on_ray, split_long

    app = _app()
    if args.split_long:
        if args.engine == "ray":
            raise InvalidParameterError("--split-long embeds on this machine's worker; leave "
                                        "out --engine ray.")
        renewed, job_id = split_long(app, args.corpus)
        if job_id is None:
            print(f"No document of {args.corpus!r} needs splitting: every long one is "
                  "embedded in passages already.")
            return 0
        docs = "1 long document" if renewed == 1 else f"{renewed:,} long documents"
        print(f"{docs} embedded before passages existed: embedding again in passages "
              "(until then found by words only).")
    elif args.engine == "ray":
        address = args.address or app.settings.ray_address or "auto"
        job_id = embed_on_ray(app, args.corpus, address=address, actors=args.actors,
                              cpus_per_actor=args.cpus_per_actor)
    else:
        job_id = embed(app, args.corpus)
    if job_id is None:
        print(f"Every document of {args.corpus!r} is embedded already.")
        return 0
    if not args.wait:
        print(f"Embedding job {job_id} queued; `searchapp worker` runs it.")
        return 0
    code = wait_for_job(app, job_id, f"embed job {job_id}")
    if code == 0:
        from searchapp.jobs import queue

        result = queue.get(app.db, job_id).result or {}
        if result.get("split"):
            print(split_sentence(result["split"], result["passages"]))
    return code


def cmd_search(args: argparse.Namespace) -> int:
    from searchapp.search import DEFAULT_MODE, check_mode, search

    mode = check_mode(args.mode or DEFAULT_MODE)
    hits = search(_app(), args.corpus, args.query, k=args.k, min_score=args.min_score,
                  mode=mode, where=args.where)
    if args.json:
        _print_json({"mode": mode, "results": [search_hit_json(h) for h in hits]})
        return 0
    if not hits:
        print("No results.")
    for rank, h in enumerate(hits, start=1):
        print(f"{rank:>3}. {h.score:.3f}  [{h.id}]  {h.marked_snippet}")
        if mode == "hybrid" or h.passage is not None:
            print(" " * 7 + search_hit_detail(h))
    return 0


def search_hit_json(h) -> dict:
    """One hit as the JSON of ``searchapp search --json``."""
    return {"id": h.id, "text": h.text, "score": h.score,
            "semantic": {"rank": h.semantic_rank, "score": h.semantic_score},
            "lexical": {"rank": h.lexical_rank, "score": h.lexical_score},
            "passage": None if h.span is None else
            {"number": h.passage, "start": h.span[0], "end": h.span[1]},
            "snippet": h.marked_snippet, "meta": h.meta}


def search_hit_detail(h) -> str:
    """``semantic #2 0.812 · lexical #1 7.310 · passage 4`` for the text output."""
    parts = []
    for name, rank, score in (("semantic", h.semantic_rank, h.semantic_score),
                              ("lexical", h.lexical_rank, h.lexical_score)):
        if score is not None:
            parts.append(f"{name} {'#' + str(rank) if rank else '(not in its list)'} "
                         f"{score:.3f}")
        else:
            parts.append(f"{name} -")
    if h.passage is not None:
        parts.append(f"passage {h.passage + 1}")
    return " · ".join(parts)


def cmd_corpora(args: argparse.Namespace) -> int:
    from searchapp.corpora import delete
    from searchapp.store import repo

    app = _app()
    if args.action == "delete":
        if not args.name:
            raise SearchAppError("Say which corpus to delete: searchapp corpora delete NAME")
        delete(app, args.name)
        print(f"Deleted corpus {args.name!r}, its embeddings and index files.")
        return 0
    with app.db.session() as s:
        rows = [vars(c) for c in repo.summaries(s)]
    if args.json:
        _print_json({"corpora": rows})
    elif not rows:
        print("No corpora yet. Add one: searchapp ingest FILE --corpus NAME")
    else:
        _print_table(rows, ["name", "model_name", "documents", "embedded"])
    return 0


def cmd_jobs(args: argparse.Namespace) -> int:
    from searchapp.jobs import queue

    app = _app()
    if args.action == "cancel":
        if args.job_id is None:
            raise SearchAppError("Say which job to cancel: searchapp jobs cancel ID")
        job = queue.cancel(app.db, args.job_id)
        print(f"Job {job.id}: {'cancelled' if job.finished else 'cancel requested'}.")
        return 0
    jobs = queue.recent(app.db, args.limit)
    rows = [_job_row(j) for j in jobs]
    if args.json:
        _print_json({"jobs": rows})
    elif not rows:
        print("No jobs yet.")
    else:
        _print_table(rows, ["id", "kind", "status", "progress", "rate", "left", "created",
                            "detail"])
    return 0


def _job_row(job) -> dict:
    """One row of `searchapp jobs`: a running job's rate and time left in their own columns."""
    from searchapp.jobs.horizon import SEPARATOR, split_message

    text, horizon = split_message(job.message) if not job.finished else (job.message, "")
    rate, _, left = horizon.partition(SEPARATOR)
    return {"id": job.id, "kind": job.kind, "status": job.status,
            "progress": f"{job.progress_done}/{job.progress_total}", "rate": rate,
            "left": left.removeprefix("about ").removesuffix(" left"),
            "created": job.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            "detail": (job.error or text or "")[:70]}


def cmd_worker(args: argparse.Namespace) -> int:
    from searchapp.jobs.worker import serve, work

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    app = _app()
    if args.once:
        print(f"Ran {work(app, stop_when_idle=True)} jobs.")
        return 0
    serve(app)
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from searchapp.config import Settings
    from searchapp.models import list_models

    rows = []
    for m in list_models(Settings.from_env()):
        rows.append({"name": m.name, "source": m.source,
                     "base": str(m.card.get("base_model", "")),
                     "objective": str(m.card.get("objective", "")),
                     "metrics": ", ".join(f"{k}={v}" for k, v in m.metrics.items()),
                     "status": m.status, "path": str(m.path)})
    if args.json:
        _print_json({"models": rows})
    else:
        _print_table(rows, ["name", "source", "base", "objective", "metrics", "status"])
    return 0


def cmd_duplicates(args: argparse.Namespace) -> int:
    from searchapp import duplicates as dup
    from searchapp.duplicates.export import groups_csv, pairs_csv
    from searchapp.handle import open_corpus

    if not args.corpus:
        raise SearchAppError("Say which corpus: searchapp duplicates --corpus NAME")
    out = output_path(args.out) if args.out else None
    if out is not None:
        groups_out = output_path(str(out.with_name(out.stem + "-groups.csv")))
    app = _app()
    handle = open_corpus(app, args.corpus)
    report = dup.find_duplicates(app, handle, args.threshold, args.k, compute=False)
    if report is None and handle.index.count <= dup.INLINE_MAX:
        report = dup.find_duplicates(app, handle, args.threshold, args.k)
    elif report is None:
        job_id = dup.request_mining(app, handle, args.threshold, args.k)
        if wait_for_job(app, job_id, f"duplicates job {job_id}") != 0:
            return 1
        report = dup.find_duplicates(app, args.corpus, args.threshold, args.k, compute=False)
        if report is None:
            raise SearchAppError(f"Corpus {args.corpus!r} changed while its duplicates were "
                                 "mined; run the command again.")
    if args.json:
        _print_json(report.as_dict())
        return 0
    if out is not None:
        write_atomically(out, lambda tmp: pairs_csv(report, tmp))
        write_atomically(groups_out, lambda tmp: groups_csv(report, tmp))
        print(f"Wrote {report.pair_count} pairs to {out} and {report.group_count} groups "
              f"to {groups_out}.")
        return 0
    how = "stored result" if report.reused else f"mined in {report.seconds:.2f} s"
    print(f"Corpus {report.corpus!r} ({report.documents} documents, {report.model}), threshold "
          f"{report.threshold:.3f}, k={report.k} ({report.method}, {how}): "
          f"{report.pair_count} pairs ({report.exact_count} exact), "
          f"{report.group_count} groups.")
    _print_table([{"score": f"{p.score:.3f}", "exact": "yes" if p.exact else "",
                   "a": p.a, "b": p.b, "a_text": _short(p.a_text), "b_text": _short(p.b_text)}
                  for p in report.top_pairs(args.limit)],
                 ["score", "exact", "a", "b", "a_text", "b_text"])
    for g in report.top_groups(args.limit):
        print(f"group of {g.size}, representative [{g.representative}] {_short(g.texts[0], 60)}")
        for member, score, text in list(zip(g.members, g.scores, g.texts, strict=True))[1:]:
            print(f"    {score:.3f}  [{member}]  {_short(text, 60)}")
    return 0


def _short(text: str, width: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def cmd_duplicates_check(args: argparse.Namespace) -> int:
    from searchapp.duplicates import check

    app = _app()
    matches = check(app, args.corpus, args.question, args.threshold)
    added = None
    if args.add:
        from searchapp.duplicates import add_question

        summary = add_question(app, args.corpus, args.question, args.id)
        added = {"added": summary.added, "job_id": summary.job_id}
    if args.json:
        _print_json({"matches": [m.as_dict() for m in matches]}
                    | ({"added": added} if added else {}))
        return 0
    if not matches:
        print("No likely duplicates above the threshold.")
    for m in matches:
        print(f"{m.score:.3f}{' exact' if m.exact else ''}  [{m.id}]  {m.text}")
    if added:
        print(f"Added to {args.corpus!r}; embedding job {added['job_id']} queued "
              "(`searchapp worker` runs it)." if added["job_id"] else
              f"Already in {args.corpus!r}: nothing added.")
    return 0


def cmd_duplicates_calibrate(args: argparse.Namespace) -> int:
    from searchapp.calibration import Calibration, read_labelled_pairs, save_threshold
    from searchapp.jobs import queue

    app = _app()
    model = args.model or app.settings.model
    path = Path(args.pairs).expanduser().resolve()
    pairs = read_labelled_pairs(path)  # fails here, before a job, on a bad file
    job_id = queue.enqueue(app.db, "calibrate", {"model": model, "path": str(path),
                                                 "filename": path.name})
    if wait_for_job(app, job_id, f"calibrate job {job_id}") != 0:
        return 1
    cal = Calibration(**queue.get(app.db, job_id).result)
    if args.save:
        save_threshold(app, cal)
    if args.json:
        _print_json({k: v for k, v in cal.as_dict().items() if k != "curve"} | {"saved": args.save})
        return 0
    print(f"{model} on {len(pairs):,} labelled pairs ({cal.positives:,} duplicates) from "
          f"{path.name}: AP {cal.ap:.2f}, best F1 {cal.f1:.2f} at threshold {cal.threshold:.3f} "
          f"(precision {cal.precision:.2f}, recall {cal.recall:.2f}).")
    print(f"Saved {cal.threshold:.3f} as the duplicate threshold of {model}." if args.save else
          "Use it as the model's duplicate threshold: add --save.")
    return 0


def cmd_clusters(args: argparse.Namespace) -> int:
    from searchapp.clusters import ClusterParams, cached_clusters, request_clusters
    from searchapp.csv_safe import safe_csv

    if args.json and args.out:
        raise SearchAppError("Choose one output: --json or --out FILE.csv.")
    out = output_path(args.out) if args.out else None
    app = _app()
    params = ClusterParams(method=args.method, k=args.k, min_size=args.min_size,
                           threshold=args.threshold, projection=args.projection).validated()
    result, job_id = request_clusters(app, args.corpus, params)
    if result is None:
        code = wait_for_job(app, job_id, f"clusters job {job_id}")
        if code:
            return code
        result = cached_clusters(app, args.corpus, params)
        if result is None:
            raise SearchAppError(f"Corpus {args.corpus!r} changed while its clusters were "
                                 "computed; run the command again.")
    if args.json:
        _print_json(result.summary())
        return 0
    if out is not None:
        frame = result.frame().drop(columns=["doc_id"])
        write_atomically(out, lambda tmp: safe_csv(frame, tmp))
        print(f"Wrote {len(frame)} assignments to {out}.")
    rows = [{k: c[k] for k in ("id", "size", "label", "example")} for c in result.clusters]
    _print_table(rows, ["id", "size", "label", "example"])
    print(f"{len(result.clusters)} clusters; {result.outliers} outliers "
          f"({result.outlier_share:.1%} of {result.size} documents).")
    return 0


def cmd_finetune(args: argparse.Namespace) -> int:
    from searchapp.training.task import start_finetune

    columns = column_mapping(args.column)
    app = _app()
    started = start_finetune(app, args.train, dev=args.dev, name=args.name,
                             objective=args.objective, base=args.base, columns=columns,
                             epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                             seed=args.seed, evals_per_epoch=args.evals_per_epoch,
                             average_decay=args.average_decay)
    print(f"Training data: {started.data.describe()}.")
    if args.objective == "auto":
        from searchapp.training.data import AUTO_REASONS

        print(f"Why {started.data.objective}: {AUTO_REASONS[started.data.kind]}")
    print(f"Dev data: {started.dev.describe() if started.dev else '10% of it held out'}.")
    if not args.wait:
        print(f"Fine-tuning job {started.job_id} queued; `searchapp worker` runs it.")
        return 0
    progress_log = logging.getLogger("searchapp.training")  # the trainer's progress lines
    progress_log.setLevel(logging.INFO)
    progress_log.addHandler(logging.StreamHandler(sys.stderr))
    code = wait_for_job(app, started.job_id, f"finetune job {started.job_id}")
    if code == 0:
        from searchapp.jobs import queue

        result = queue.get(app.db, started.job_id).result or {}
        before, after = result["metrics"]["before"], result["metrics"]["after"]
        print(f"Saved model {result['model']} in {result['path']}.")
        print("Dev " + ", ".join(f"{k}: {before[k]} -> {after[k]}" for k in after) + ".")
    return code


def cmd_evaluate(args: argparse.Namespace) -> int:
    from searchapp.training.evaluate import evaluate_pairs_file, evaluate_sts_file

    app = _app()
    if bool(args.sts) == bool(args.pairs):
        raise SearchAppError("Give exactly one of --sts FILE or --pairs FILE.")
    if args.sts:
        result = evaluate_sts_file(app, args.model, args.sts)
    else:
        result = evaluate_pairs_file(app, args.model, args.pairs, args.threshold)
    if args.json:
        _print_json(result)
    else:
        _print_table([result], list(result))
    return 0


def cmd_hash_password(_args: argparse.Namespace) -> int:
    """Print a hash for SEARCHAPP_PASSWORD_HASH: asks twice on a terminal, else reads a line
    of stdin (``echo "$PW" | searchapp hash-password``). The password is never printed."""
    from searchapp.passwords import hash_password

    if sys.stdin.isatty():
        import getpass

        password = getpass.getpass("Password: ")
        if getpass.getpass("Same again: ") != password:
            raise SearchAppError("The two passwords differ; nothing was printed. Try again.")
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    if not password:
        raise SearchAppError("The password is empty: type one, or give it on stdin.")
    print(hash_password(password))
    return 0


# ---- parser ---------------------------------------------------------------------
def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="searchapp", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("ingest", help="upload a CSV/TSV/JSONL/JSON/TXT/Parquet file into a corpus")
    c.add_argument("path")
    c.add_argument("--corpus", required=True)
    c.add_argument("--text-column")
    c.add_argument("--id-column")
    c.add_argument("--model", help="model for a new corpus (default: SEARCHAPP_MODEL)")
    c.add_argument("--wait", action="store_true", help="return once embedded and indexed")
    c.set_defaults(func=cmd_ingest)

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
    c.add_argument("--actors", type=_positive_int,
                   help="with --engine ray: encoder actors (default: one per GPU, else one "
                   "per 4 CPUs)")
    c.add_argument("--cpus-per-actor", type=_positive_int,
                   help="with --engine ray: CPUs (torch threads) per actor")
    c.add_argument("--split-long", action="store_true",
                   help="embed again, in passages, long documents embedded before passages "
                   "existed (a corpus made before schema 3)")
    c.set_defaults(func=cmd_embed)

    c = sub.add_parser("search", help="search a corpus by meaning, by words, or both")
    c.add_argument("--corpus", required=True)
    c.add_argument("query")
    c.add_argument("-k", type=int, default=10)
    c.add_argument("--min-score", type=float, help="minimum cosine (semantic and hybrid)")
    c.add_argument("--mode", default=None, metavar="{hybrid,semantic,lexical}",
                   help="hybrid (default): meaning and words fused; semantic: meaning only; "
                        "lexical: words only (BM25)")
    c.add_argument("--where", action="append", metavar="COL=VAL",
                   help="metadata filter, repeatable: product=billing, year>=2024, "
                        "date<2024-06-01 (operators = != < <= > >=)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_search)

    c = sub.add_parser("corpora", help="list corpora; `corpora delete NAME` removes one")
    c.add_argument("action", nargs="?", choices=["list", "delete"], default="list")
    c.add_argument("name", nargs="?")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_corpora)

    c = sub.add_parser("jobs", help="list jobs; `jobs cancel ID` cancels one")
    c.add_argument("action", nargs="?", choices=["list", "cancel"], default="list")
    c.add_argument("job_id", nargs="?", type=int)
    c.add_argument("--limit", type=int, default=20)
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_jobs)

    c = sub.add_parser("clusters", help="the groups of a corpus, named, with a 2-D map")
    c.add_argument("--corpus", required=True)
    c.add_argument("--method", choices=["community", "hdbscan", "kmeans"], default="community")
    c.add_argument("--k", type=int, help="number of clusters for kmeans (default: from size)")
    c.add_argument("--min-size", type=int, help="smallest cluster (community, hdbscan)")
    c.add_argument("--threshold", type=float, help="cosine for community (default 0.4)")
    c.add_argument("--projection", choices=["umap", "pca"], default="umap",
                   help="2-D map: umap (default) or pca (fast)")
    c.add_argument("--json", action="store_true", help="clusters, outliers and assignments")
    c.add_argument("--out", metavar="FILE.csv", help="write id, cluster, label, x, y to a CSV")
    c.set_defaults(func=cmd_clusters)

    c = sub.add_parser("worker", help="run background jobs until stopped")
    c.add_argument("--once", action="store_true", help="run what is queued, then exit")
    c.set_defaults(func=cmd_worker)

    c = sub.add_parser("duplicates", help="duplicate pairs and groups of a corpus; "
                       "`duplicates check` tests a new question, `duplicates calibrate` a model")
    c.add_argument("--corpus")
    c.add_argument("--threshold", type=float, help="cosine threshold (default: the model's)")
    c.add_argument("--k", type=int, default=10, help="nearest neighbours per document")
    c.add_argument("--limit", type=int, default=20, help="pairs and groups printed")
    out = c.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--out", metavar="FILE.csv", help="write pairs (and FILE-groups.csv)")
    c.set_defaults(func=cmd_duplicates)
    actions = c.add_subparsers(dest="action", metavar="ACTION")
    a = actions.add_parser("check", help="likely duplicates of a new question")
    a.add_argument("--corpus", required=True)
    a.add_argument("question")
    a.add_argument("--threshold", type=float)
    a.add_argument("--add", action="store_true", help="then add the question to the corpus")
    a.add_argument("--id", help="id for the added question (default: from its text)")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=cmd_duplicates_check)
    a = actions.add_parser("calibrate", help="AP and best-F1 threshold on labelled pairs")
    a.add_argument("--model", help="model name (default: SEARCHAPP_MODEL)")
    a.add_argument("--pairs", required=True, help="CSV/TSV(.gz) with sentence1, sentence2, label")
    a.add_argument("--save", action="store_true", help="store the threshold for the model")
    a.add_argument("--json", action="store_true")
    a.set_defaults(func=cmd_duplicates_calibrate)

    c = sub.add_parser("finetune", help="fine-tune a model on labelled pairs (a worker job)")
    c.add_argument("--train", required=True, help="CSV/TSV/JSONL of pairs or triplets")
    c.add_argument("--dev", help="dev file (default: 10%% of --train held out)")
    c.add_argument("--objective", default="auto",
                   choices=["auto", "softmax", "cosine", "triplet", "mnrl", "contrastive",
                            "cosent", "angle"])
    c.add_argument("--base", help="model to start from (default: SEARCHAPP_MODEL)")
    c.add_argument("--name", required=True, help="name of the new model")
    c.add_argument("--epochs", type=int)
    c.add_argument("--batch-size", type=int)
    c.add_argument("--lr", type=float)
    c.add_argument("--seed", type=int)
    c.add_argument("--evals-per-epoch", type=int, help="dev evaluations per epoch (default 1); "
                   "the best state is kept")
    c.add_argument("--average-decay", type=float, help="evaluate and keep a moving average "
                   "of the weights, e.g. 0.995 (default 0: the raw weights)")
    c.add_argument("--column", action="append", metavar="ROLE=COLUMN",
                   help="map a column to a role (sentence1, sentence2, score, label, anchor, "
                        "positive, negative); repeatable")
    c.add_argument("--wait", action="store_true", help="train here and return when done")
    c.set_defaults(func=cmd_finetune)

    c = sub.add_parser("evaluate", help="evaluate a model on STS scores or 0/1 pairs")
    c.add_argument("--model", required=True)
    c.add_argument("--sts", help="file with sentence1, sentence2, score")
    c.add_argument("--pairs", help="file with sentence1, sentence2, label (0/1)")
    c.add_argument("--threshold", type=float, help="cosine threshold (default: best F1)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_evaluate)

    c = sub.add_parser("models", help="list models with their metrics")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=cmd_models)

    c = sub.add_parser("hash-password", help="print a hash of a password for "
                       "SEARCHAPP_PASSWORD_HASH (the web app's login)")
    c.set_defaults(func=cmd_hash_password)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    restrict_umask()  # files in the data folder (and exports) are private: 0600
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except SearchAppError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `searchapp jobs | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 0
