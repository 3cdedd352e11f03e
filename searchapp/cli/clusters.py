"""``searchapp clusters``: the named groups of a corpus and its 2-D map.

Example:
    $ searchapp clusters --corpus faq --level 8
    $ searchapp clusters --corpus faq --method kmeans --k 5 --out faq-clusters.csv
    $ searchapp clusters --corpus faq --save-filter 3 --filter-name Refunds
    $ searchapp search --corpus faq --where 'cluster="Refunds"' "money back"
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import output_path, print_json, print_table, write_atomically
from searchapp.errors import SearchAppError


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``clusters`` to the command parser."""
    c = sub.add_parser("clusters", help="the groups of a corpus, named, with a 2-D map")
    c.add_argument("--corpus", required=True)
    c.add_argument("--method", choices=["auto", "community", "hdbscan", "kmeans"], default="auto",
                   help="auto (default): k-means with the number of clusters chosen from the "
                        "data, every document in a cluster, with a tree of levels")
    c.add_argument("--k", type=int, help="number of clusters for kmeans (default: from size)")
    c.add_argument("--min-size", type=int, help="smallest cluster (community, hdbscan)")
    c.add_argument("--threshold", type=float, help="cosine for community (default 0.4)")
    c.add_argument("--projection", choices=["umap", "pca"], default="umap",
                   help="2-D map: umap (default) or pca (fast)")
    c.add_argument("--level", type=int, metavar="N",
                   help="show the level of the tree with N clusters (see the levels listed)")
    c.add_argument("--json", action="store_true", help="clusters, outliers and assignments")
    c.add_argument("--out", metavar="FILE.csv", help="write id, cluster, label, x, y to a CSV")
    c.add_argument("--apply-judgements", action="store_true",
                   help="compute again if pair judgements changed since the stored clusters "
                        "(auto, kmeans: duplicates together, 'not duplicate' pairs apart)")
    saved = c.add_argument_group("saved filters", "keep a cluster as a search filter: its "
                                 "documents get the metadata COLUMN=NAME (search --where)")
    saved.add_argument("--save-filter", type=int, metavar="CLUSTER",
                       help="save this cluster (an id listed; of the --level shown)")
    saved.add_argument("--filter-name", metavar="NAME",
                       help="the filter's name (default: the cluster's name)")
    saved.add_argument("--filter-column", metavar="COLUMN", default="cluster",
                       help="the metadata column it is written in (default: cluster)")
    saved.add_argument("--remove-filter", metavar="NAME",
                       help="take the saved filter NAME (in --filter-column) off its documents")
    c.set_defaults(func=clusters)


def clusters(args: argparse.Namespace) -> int:
    from searchapp.clusters import ClusterParams
    from searchapp.clusters.edits import apply_edits, load_edits
    from searchapp.clusters.service import clusters_result, judgements_changed
    from searchapp.corpora.csv_safe import safe_csv

    if args.json and args.out:
        raise SearchAppError("Choose one output: --json or --out FILE.csv.")
    out = output_path(args.out) if args.out else None
    app = common.open_app()
    if args.remove_filter is not None:
        return _remove_filter(app, args)
    params = ClusterParams(method=args.method, k=args.k, min_size=args.min_size,
                           threshold=args.threshold, projection=args.projection).validated()
    result = clusters_result(app, args.corpus, params,
                             run_job=common.run_job(app, "clusters job"),
                             apply_judgements=args.apply_judgements)
    if args.level is not None and args.level not in result.level_counts:
        raise SearchAppError(f"There is no level with {args.level} clusters; the levels are: "
                             f"{', '.join(map(str, result.level_counts)) or 'none'}.")
    result = result.at_level(args.level) if args.level else result
    result = apply_edits(result, load_edits(app, result))
    if args.json:
        print_json(result.summary())
        return 0
    if out is not None:
        frame = result.frame().drop(columns=["doc_id"])
        write_atomically(out, lambda tmp: safe_csv(frame, tmp))
        print(f"Wrote {len(frame)} assignments to {out}.")
    rows = [{k: c[k] for k in ("id", "size", "label", "example")} for c in result.clusters]
    print_table(rows, ["id", "size", "label", "example"])
    print(f"{len(result.clusters)} clusters; {result.outliers} outliers "
          f"({result.outlier_share:.1%} of {result.size} documents).")
    if len(result.level_counts) > 1:
        print(f"Levels (--level N): {', '.join(map(str, result.level_counts))}.")
    if result.constraints.get("pairs"):
        pairs = result.constraints["pairs"]
        print(f"{pairs} judged pair{'s' if pairs != 1 else ''} acted as constraints "
              f"({result.constraints.get('unmet', 0)} could not be met).")
    if judgements_changed(app, result):
        print("Pair judgements changed since these clusters were computed; "
              "run again with --apply-judgements to apply them.")
    if args.save_filter is not None:
        _save_filter(app, result, args)
    _list_filters(app, args.corpus)
    return 0


def _save_filter(app, result, args: argparse.Namespace) -> None:
    from searchapp.clusters.saved_filters import save_cluster_filter

    saved = save_cluster_filter(app, result, args.save_filter, args.filter_column,
                                args.filter_name)
    print(f"Saved: {saved.documents} documents now have {saved.condition}; search in them "
          f"with --where '{saved.condition}'.")


def _remove_filter(app, args: argparse.Namespace) -> int:
    from searchapp.clusters.saved_filters import remove_saved_filter

    taken = remove_saved_filter(app, args.corpus, args.filter_column, args.remove_filter)
    print(f"Removed the saved filter {args.filter_column}={args.remove_filter!r} from "
          f"{taken} documents.")
    return 0


def _list_filters(app, corpus: str) -> None:
    from searchapp.clusters.saved_filters import saved_filters

    for saved in saved_filters(app, corpus):
        print(f"Saved filter: {saved.condition} ({saved.documents} documents)")
