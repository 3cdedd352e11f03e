"""``searchapp search``: the k best documents of a corpus for a query.

Example:
    $ searchapp search --corpus faq "how do I reset my password" -k 3 --json
"""

from __future__ import annotations

import argparse

from searchapp.cli import common
from searchapp.cli.output import cell, print_json
from searchapp.search.modes import DEFAULT_MODE, MODES


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``search`` to the command parser."""
    c = sub.add_parser("search", help="search a corpus by meaning, by words, or both")
    c.add_argument("--corpus", required=True)
    c.add_argument("query")
    c.add_argument("-k", type=int, default=10)
    c.add_argument("--min-score", type=float, help="minimum cosine (semantic and hybrid)")
    c.add_argument("--mode", default=None, metavar="{" + ",".join(MODES) + "}",
                   help="; ".join(f"{m.name}{' (default)' if m.name == DEFAULT_MODE else ''}: "
                                  f"{m.label}" for m in MODES.values()))
    c.add_argument("--where", action="append", metavar="COL=VAL",
                   help="metadata filter, repeatable: product=billing, year>=2024, "
                        "date<2024-06-01 (operators = != < <= > >=)")
    c.add_argument("--rerank", action="store_true",
                   help="the corpus' reranker reorders the first 30 results (train one with "
                        "`searchapp judge train-reranker`)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=search)


def search(args: argparse.Namespace) -> int:
    from searchapp.search.service import check_mode, hit_json
    from searchapp.search.service import search as run_search

    mode = check_mode(args.mode or DEFAULT_MODE)
    hits = run_search(common.open_app(), args.corpus, args.query, k=args.k,
                      min_score=args.min_score, mode=mode, where=args.where,
                      rerank=args.rerank)
    if args.json:
        print_json({"mode": mode, "rerank": args.rerank,
                    "results": [hit_json(h) for h in hits]})
        return 0
    if not hits:
        print("No results.")
    for rank, h in enumerate(hits, start=1):
        snippet = " ".join(h.marked_snippet.split())  # a page's line breaks are layout
        print(f"{rank:>3}. {shown_score(h)}  [{cell(h.id)}]  {cell(snippet)}")
        if h.source:
            print(" " * 7 + cell(where_in_file(h.source)))
            if h.view:  # the app's reader view, at this section (its path on the server)
                print(" " * 7 + "open: " + cell(h.view))
        if mode == "hybrid" or h.passage is not None:
            print(" " * 7 + hit_detail(h))
    return 0


def where_in_file(source: dict) -> str:
    """``guide/install.pdf · page 4 · 2.1 Requirements`` for a hit of a file.

    Example:
        >>> where_in_file({"path": "a/b.pptx", "type": "pptx", "page": 3, "section": None})
        'a/b.pptx · slide 3'
    """
    page = "slide" if source.get("type") in ("pptx", "odp") else "page"
    parts = [source["path"]]
    if source.get("page") is not None:
        parts.append(f"{page} {source['page']}")
    if source.get("section"):
        parts.append(str(source["section"]))
    return " · ".join(parts)


def hit_detail(h) -> str:
    """``meaning #2 0.812 · words #1 BM25 7.31 · passage 4`` for the text output: each list's
    rank and score (a cosine; BM25, ≈0 where the query's words are in most documents).

    Example:
        >>> from searchapp.search.service import SearchHit
        >>> hit_detail(SearchHit("a", "", 0.03, semantic_rank=2, semantic_score=0.8123,
        ...                      lexical_rank=1, lexical_score=0.0000004))
        'meaning #2 0.812 · words #1 BM25 ≈0 (its words are in most documents)'
    """
    parts = []
    for name, rank, score, shown in (
            ("meaning", h.semantic_rank, h.semantic_score, _cosine),
            ("words", h.lexical_rank, h.lexical_score, _bm25)):
        if score is not None:
            parts.append(f"{name} {'#' + str(rank) if rank else '(not in its list)'} "
                         f"{shown(score)}")
        else:
            parts.append(f"{name} -")
    if h.passage is not None:
        parts.append(f"passage {h.passage + 1}")
    return " · ".join(parts)


def shown_score(h) -> str:
    """The score a hit is listed with, as on the Search page: its cosine where it has one
    (the fused rank-fusion score means nothing to a reader), else its BM25."""
    if h.semantic_score is not None:
        return _cosine(h.semantic_score)
    if h.lexical_score is not None:
        return _bm25(h.lexical_score)
    return f"{h.score:.3f}"


def _cosine(score: float) -> str:
    return f"{score:.3f}"


def _bm25(score: float) -> str:
    if abs(score) < 0.0005:
        return "BM25 ≈0 (its words are in most documents)"
    return f"BM25 {score:.2f}"
