"""``searchapp search``: the k best documents of a corpus for a query.

When an app server or ``searchapp worker`` runs on the same data folder, the search is
asked of it over ``DATA_DIR/run/query.sock`` (``search.query_wire``): its model is loaded
already, so the answer comes in a fraction of a second, and this process imports neither
torch nor the search service. When nothing answers (or with ``--here``) it searches in
its own process, loading the model (seconds). Both ways print from the same JSON hits
(``search.service.hit_json``), so the output does not depend on who searched.

Example:
    $ searchapp search --corpus faq "how do I reset my password" -k 3 --json
"""

from __future__ import annotations

import argparse
import sys

from searchapp.cli import common
from searchapp.cli.output import cell, print_json
from searchapp.search.coverage import partial_message
from searchapp.search.modes import DEFAULT_MODE, MODES


def register(sub: argparse._SubParsersAction) -> None:
    """Add ``search`` to the command parser."""
    c = sub.add_parser(
        "search", help="search a corpus by meaning, by words, or both",
        description="Search a corpus. When the app or `searchapp worker` is running on the "
        "same data folder, it answers (its model is loaded already: well under a second); "
        "otherwise this command loads the model itself (a few seconds).")
    c.add_argument("--corpus", required=True)
    c.add_argument("query", help='the query; "a phrase", -word, -"a phrase", a OR b and '
                   "filters such as type:pdf folder:contracts file:*.md author:jane "
                   "after:2024-03-01 before:2025 product:billing year>=2024 (docs/search.md)")
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
    answer = c.add_mutually_exclusive_group()
    answer.add_argument("--answer", action="store_true", default=None,
                        help="print the sentences of the documents that answer the query "
                        "before the hits, for any query (a question gets them without this)")
    answer.add_argument("--no-answer", dest="answer", action="store_false",
                        help="hits only, even for a question")
    c.add_argument("--as-typed", action="store_true",
                   help="search the query as typed, even where a word of it finds nothing "
                        "and the corpus has a near word (no \"did you mean\")")
    c.add_argument("--here", action="store_true",
                   help="search in this process even when the app or a worker is running "
                        "(loads the model)")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=search)


def search(args: argparse.Namespace) -> int:
    request = {"corpus": args.corpus, "query": args.query, "k": args.k,
               "mode": args.mode or DEFAULT_MODE, "where": args.where,
               "min_score": args.min_score, "rerank": args.rerank, "answer": args.answer,
               "as_typed": args.as_typed,
               "remember": "local"}  # searchapp.search.history.LOCAL_USER: kept by who searches
    answer = None if args.here else ask_running(request)
    if answer is None:
        answer = search_here(request)
    hits, mode = answer["hits"], answer["mode"]
    if args.json:
        print_json({"mode": mode, "rerank": args.rerank, "answers": answer.get("answers", []),
                    "answer": answer.get("answer"), "missing": answer.get("missing", []),
                    "understood": answer.get("understood"),
                    "did_you_mean": answer.get("did_you_mean"), "results": hits})
        return 0
    if answer.get("missing"):
        print(f"warning: {partial_message(answer['missing'])}", file=sys.stderr)
    for line in (did_you_mean_lines(answer.get("did_you_mean"))
                 + understood_lines(answer.get("understood")) + answer_lines(answer)):
        print(line)
    if not hits:
        print("No results.")
    for rank, h in enumerate(hits, start=1):
        snippet = " ".join(h["snippet"].split())  # a page's line breaks are layout
        print(f"{rank:>3}. {shown_score(h)}  [{cell(h['id'])}]  {cell(snippet)}")
        if h["source"]:
            print(" " * 7 + cell(where_in_file(h["source"])))
            if h.get("view"):  # the app's reader view, at this section (its path on the server)
                print(" " * 7 + "open: " + cell(h["view"]))
        if mode == "hybrid" or h["passage"] is not None:
            print(" " * 7 + hit_detail(h))
    return 0


def ask_running(request: dict) -> dict | None:
    """The answer of an app or worker running on this data folder (``query_wire``), or None
    when none answers. Light: no model, no search service is imported."""
    from searchapp.config import Settings
    from searchapp.search import query_wire

    settings = Settings.from_env()
    return query_wire.ask(settings.data_dir, {
        **request, "database": query_wire.database_key(settings.database_url)})


def search_here(request: dict) -> dict:
    """The search run in this process: ``{"mode": ..., "hits": [hit_json, ...], "answers":
    [...], "answer": {...}}``, the shape a running process answers with."""
    from searchapp.answers.service import answer_request

    return answer_request(common.one_query_app(), request)


def understood_lines(understood: dict | None) -> list[str]:
    """What the query language made of the query, when it made anything of it: the
    filters, phrases and exclusions applied, and a note for each one that was not.

    Example:
        >>> understood_lines({"text": "lease", "phrases": ["notice period"], "any_of": [],
        ...                   "excluded": ["draft"], "filters": ["type:pdf"],
        ...                   "notices": ["color: is not a field here"]})
        ['Understood: "notice period" · not: draft · filters: type:pdf', \
'Note: color: is not a field here', '']
    """
    if not understood:
        return []
    parts = [f'"{p}"' for p in understood.get("phrases", [])]
    parts += [" OR ".join(f'"{t}"' if " " in t else t for t in group)
              for group in understood.get("any_of", [])]
    if understood.get("excluded"):
        parts.append("not: " + ", ".join(understood["excluded"]))
    if understood.get("filters"):
        parts.append("filters: " + " ".join(understood["filters"]))
    lines = ["Understood: " + " · ".join(cell(p) for p in parts)] if parts else []
    lines += ["Note: " + cell(n) for n in understood.get("notices", [])]
    return [*lines, ""] if lines else []


def did_you_mean_lines(fixed: dict | None) -> list[str]:
    """The line printed before the hits when the corrected query was searched instead.

    Example:
        >>> did_you_mean_lines({"query": "postgres port", "original": "postgrse port",
        ...                     "corrected_words": [["postgrse", "postgres"]]})
        ['Showing results for: postgres port; search instead for: postgrse port (--as-typed)', '']
        >>> did_you_mean_lines(None)
        []
    """
    if not fixed:
        return []
    return [f"Showing results for: {cell(fixed['query'])}; search instead for: "
            f"{cell(fixed['original'])} (--as-typed)", ""]


def answer_lines(answer: dict) -> list[str]:
    """The answer lines printed before the hits: each answer with where it stands, or the
    silence line; nothing when no answer was sought.

    Example:
        >>> answer_lines({"answer": {"asked": True, "silent": True}, "answers": []})
        ['Answer: no clear answer in these documents.', '']
        >>> answer_lines({"answer": {"asked": True, "silent": False}, "answers": [
        ...     {"text": "Run  git reset --soft HEAD^.", "doc_id": "git-reset.html", "score": 0.71,
        ...      "source": {"path": "git-reset.html", "type": "html", "page": None,
        ...                 "section": "EXAMPLES"}, "view": None}]})[:2]
        ['Answer 1 (0.710): Run git reset --soft HEAD^.', '         git-reset.html · EXAMPLES']
    """
    meta = answer.get("answer") or {}
    if not meta.get("asked"):
        return []
    if not answer.get("answers"):
        return ["Answer: no clear answer in these documents.", ""]
    lines = []
    for n, a in enumerate(answer["answers"], start=1):
        lines.append(f"Answer {n} ({a['score']:.3f}): {cell(' '.join(a['text'].split()))}")
        where = where_in_file(a["source"]) if a.get("source") else f"[{a['doc_id']}]"
        lines.append(" " * 9 + cell(where))
        if a.get("view"):
            lines.append(" " * 9 + "open: " + cell(a["view"]))
    return [*lines, ""]


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


def hit_detail(h: dict) -> str:
    """``meaning #2 0.812 · words #1 BM25 7.31 · passage 4`` for the text output of a JSON hit
    (``hit_json``): each list's rank and score (a cosine; BM25, ≈0 where the query's words
    are in most documents).

    Example:
        >>> hit_detail({"semantic": {"rank": 2, "score": 0.8123}, "passage": None,
        ...             "lexical": {"rank": 1, "score": 0.0000004}})
        'meaning #2 0.812 · words #1 BM25 ≈0 (its words are in most documents)'
    """
    parts = []
    for name, key, shown in (("meaning", "semantic", _cosine), ("words", "lexical", _bm25)):
        rank, score = h[key]["rank"], h[key]["score"]
        if score is not None:
            parts.append(f"{name} {'#' + str(rank) if rank else '(not in its list)'} "
                         f"{shown(score)}")
        else:
            parts.append(f"{name} -")
    if h["passage"] is not None:
        parts.append(f"passage {h['passage']['number'] + 1}")
    return " · ".join(parts)


def shown_score(h: dict) -> str:
    """The score a JSON hit is listed with, as on the Search page: its cosine where it has
    one (the fused rank-fusion score means nothing to a reader), else its BM25.

    Example:
        >>> shown_score({"score": 0.03, "semantic": {"score": 0.8123}, "lexical": {"score": 7}})
        '0.812'
    """
    if h["semantic"]["score"] is not None:
        return _cosine(h["semantic"]["score"])
    if h["lexical"]["score"] is not None:
        return _bm25(h["lexical"]["score"])
    return f"{h['score']:.3f}"


def _cosine(score: float) -> str:
    return f"{score:.3f}"


def _bm25(score: float) -> str:
    if abs(score) < 0.0005:
        return "BM25 ≈0 (its words are in most documents)"
    return f"BM25 {score:.2f}"
