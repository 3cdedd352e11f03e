"""Retrieval in other languages and across languages (issue 48's acceptance), through the app.

Collection: Debian's translated manual pages installed here (``apt-get install -y manpages-de
manpages-fr manpages-es manpages-ja``): ``/usr/share/man/{de,fr,es,ja}/man1`` and, for English,
``/usr/share/man/man1``. A page counts when it exists in English and in the language under the
same file name and both have a NAME summary and a DESCRIPTION section. For each page:

- the **query** is its NAME summary without the command name (the text after `` - ``:
  "list directory contents", "Verzeichnisinhalte auflisten");
- the **document** is the first ``DOC_CHARS`` characters of its DESCRIPTION section (the roff
  source's text, requests and escapes removed), in one language.

Pages per language are capped (``--pages``, a sample seeded by ``--seed``) to keep the run
short on 2 cores (about 2 minutes); the translated languages have fewer usable pages than the
default cap of 300, so only the English-only sample (``en→en``) depends on the seed.
For each language X, one corpus holds X's documents of X's sample and another
the English documents of the same pages, so both directions search a pool of the same size.
Directions: ``X→X`` (monolingual), ``en→X`` (English query, X pages), ``X→en`` (X query,
English pages), ``en→en (X pages)`` (English query, English pages of X's sample: the same
pool in English, what X's numbers compare with), and ``en→en`` on its own sample of all the
English pages (pages of every installed package: an easier pool, more varied than the
translated ones, which are mostly coreutils and the like). The one relevant document of a
query is its own page; MRR@10 per direction, with a percentile-bootstrap 95% interval over the
queries (``searchapp.evaluation.bootstrap``), and the paired difference (same draws of queries)
of the multilingual model's hybrid against BM25 and the bundled model, with its interval.

Systems, all through the app's own ``searchapp.search.service.search`` on a temporary data folder
(SQLite): BM25 (``lexical``), the bundled model ``all-MiniLM-L6-v2`` (``semantic``) and its
``hybrid``, and ``use-multilingual-v3`` (``semantic``) and its ``hybrid``: each corpus is
created and embedded with its model as a user's would be (``table_upload.upload(model=...)``,
the worker's jobs). BM25 is the same for both models' corpora; it is measured on the bundled
model's. Three switched-off variants read the same corpora: the multilingual hybrid with its
query words' translations off (``SEARCHAPP_TRANSLATE_WORDS=0``), and BM25 and that hybrid
with the query's stems off (``SEARCHAPP_SEARCH_STEMS=0``: the index keeps its documents'
stems, so this isolates the query side; the index as it was before stems is the previous
commit's run of this script on the same pages).

Caveats: some translated pages are only partly translated (English paragraphs left in), and the
Japanese pages are older versions of the English ones; the command name is often in the
document's text (it is removed from the query only).

Run:  PYTHONPATH=. .venv/bin/python benchmarks/languages.py [--pages 300] [--seed 48]
Writes benchmarks/results/languages.json and prints the table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "languages.json"
MAN = Path("/usr/share/man")
FOLDERS = {"en": MAN / "man1", "de": MAN / "de" / "man1", "fr": MAN / "fr" / "man1",
           "es": MAN / "es" / "man1", "ja": MAN / "ja" / "man1"}
OTHERS = ("de", "fr", "es", "ja")
DESCRIPTION = {"DESCRIPTION", "BESCHREIBUNG", "DESCRIPCIÓN", "DESCRIPCION", "説明"}
DOC_CHARS = 600
K = 10
BUNDLED = "all-MiniLM-L6-v2"
MULTILINGUAL = "use-multilingual-v3"
AS_TYPED = f"{MULTILINGUAL} hybrid, words as typed"  # SEARCHAPP_TRANSLATE_WORDS=0
BM25_AS_WRITTEN = "bm25, no query stems"  # SEARCHAPP_SEARCH_STEMS=0
AS_WRITTEN = f"{MULTILINGUAL} hybrid, no query stems"  # SEARCHAPP_SEARCH_STEMS=0
SYSTEMS = (BM25_AS_WRITTEN, "bm25", f"{BUNDLED} semantic", f"{BUNDLED} hybrid",
           f"{MULTILINGUAL} semantic", AS_TYPED, AS_WRITTEN, f"{MULTILINGUAL} hybrid")
ESCAPES = re.compile(r"\\f(\[[^]]*\]|\(..|.)|\\\(..|\\\[[^]]*\]|\\[&e|^~0c/,]|\\s[-+]?\d"
                     r"|\\\*(\(..|\[[^]]*\]|.)|\\[nk](\(..|\[[^]]*\]|.)")
TEXT_MACROS = {"B", "I", "BR", "BI", "IR", "RB", "IB", "RI", "SM", "SB", "TP", "IP", "Nm",
               "Nd", "Ar", "Fl", "Pa", "Em", "Sy", "Dq", "Ql", "Xr"}
CANDIDATE = f"{MULTILINGUAL} hybrid"  # compared, paired, with BM25 and the bundled model
SUMMARY = re.compile(r"\s+(?:-|—|–)\s+")


@dataclass
class Page:
    """One manual page in one language: its summary (the query) and description (the doc)."""

    name: str
    summary: str
    description: str


def _text_line(line: str) -> str:
    """A roff line's visible text ("" for a request that shows none)."""
    if line.startswith(('.\\"', "'\\\"", '\\"')):
        return ""
    if line.startswith((".", "'")):
        macro, _, rest = line[1:].partition(" ")
        if macro not in TEXT_MACROS:
            return ""
        line = rest.replace('"', "")
    line = line.replace("\\-", "-").replace("\\(em", "—").replace("\\(en", "–")
    line = ESCAPES.sub("", line).replace("\\ ", " ").replace("\\\\", "\\")
    return line


def _sections(roff: str) -> list[tuple[str, str]]:
    """(heading, text) of each ``.SH``/``.Sh`` section, in order."""
    out: list[tuple[str, list[str]]] = []
    for line in roff.splitlines():
        if line.startswith((".SH", ".Sh")):
            out.append((line[3:].strip().strip('"').upper(), []))
        elif out:
            text = _text_line(line)
            if text.strip():
                out[-1][1].append(text.strip())
    return [(heading, " ".join(" ".join(lines).split())) for heading, lines in out]


def read_page(path: Path) -> Page | None:
    """The page at ``path`` (gzipped roff), or None without a summary or a description."""
    try:
        roff = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    sections = _sections(roff)
    if not sections or roff.lstrip().startswith(".so"):
        return None
    parts = SUMMARY.split(sections[0][1], maxsplit=1)  # the first section is NAME
    described = [text for heading, text in sections if heading in DESCRIPTION]
    if len(parts) < 2 or not described or len(described[0]) < 40 or len(parts[1]) < 3:
        return None
    return Page(path.name, parts[1].strip(), described[0][:DOC_CHARS])


def read_language(lang: str) -> dict[str, Page]:
    """Every usable page of ``lang``'s man1, by file name."""
    pages = (read_page(p) for p in sorted(FOLDERS[lang].glob("*.gz")))
    return {p.name: p for p in pages if p is not None}


def sample(names: set[str], cap: int, seed: int, summaries: dict[str, str]) -> list[str]:
    """Up to ``cap`` of ``names``, seeded; pages whose query is another page's too are left out
    (a query with two right answers)."""
    counts: dict[str, int] = {}
    for name in names:
        counts[summaries[name]] = counts.get(summaries[name], 0) + 1
    unique = sorted(n for n in names if counts[summaries[n]] == 1)
    random.Random(seed).shuffle(unique)
    return sorted(unique[:cap])


def reciprocal_ranks(app, corpus: str, queries: list[str], wanted: list[str],
                     mode: str) -> np.ndarray:
    """1/rank of each query's page in the app's top ``K`` (0 when it is not there)."""
    from searchapp.search.service import search

    out = np.zeros(len(queries))
    for i, (query, page) in enumerate(zip(queries, wanted, strict=True)):
        ids = [hit.id for hit in search(app, corpus, query, k=K, mode=mode)]
        out[i] = 1.0 / (ids.index(page) + 1) if page in ids else 0.0
    return out


def store(app, corpus: str, pages: list[Page], model: str) -> None:
    """A corpus of ``pages``' descriptions, embedded with ``model`` as an upload would be."""
    from searchapp.intake.table import Table
    from searchapp.intake.table_upload import upload

    records = [{"id": p.name, "text": p.description} for p in pages]
    upload(app, Table.from_records(records, lambda n: f"row {n}", fmt="csv"), corpus,
           text_column="text", id_column="id", model=model)


def directions(pages: dict[str, dict[str, Page]], cap: int, seed: int) -> list[dict]:
    """Each direction: its name, the corpus documents' language and pages, and the queries."""
    out = []
    english = pages["en"]
    for lang in OTHERS:
        both = set(pages[lang]) & set(english)
        chosen = sample(both, cap, seed, {n: pages[lang][n].summary for n in both})
        for source, target in ((lang, lang), ("en", lang), (lang, "en"), ("en", "en")):
            label = f"{source}→{target}" + (f" ({lang} pages)" if source == target == "en" else "")
            out.append({"direction": label, "docs": target, "set": lang,
                        "names": chosen, "queries": [pages[source][n].summary for n in chosen]})
    chosen = sample(set(english), cap, seed, {n: p.summary for n, p in english.items()})
    out.append({"direction": "en→en", "docs": "en", "set": "en", "names": chosen,
                "queries": [english[n].summary for n in chosen]})
    return out


def corpus_name(model: str, docs: str, page_set: str) -> str:
    return f"{'ml' if model == MULTILINGUAL else 'mini'}-{docs}-of-{page_set}"


def build(app, pages: dict[str, dict[str, Page]], runs: list[dict]) -> dict:
    """Every corpus the runs need, for both models, embedded; returns the seconds taken."""
    from searchapp.jobs.worker import work

    started = time.perf_counter()
    done = set()
    for run in runs:
        for model in (BUNDLED, MULTILINGUAL):
            name = corpus_name(model, run["docs"], run["set"])
            if name not in done:
                store(app, name, [pages[run["docs"]][n] for n in run["names"]], model)
                done.add(name)
    work(app, stop_when_idle=True)
    return {"corpora": len(done), "seconds": round(time.perf_counter() - started, 1)}


def measure(app, as_typed, as_written, runs: list[dict]) -> list[dict]:
    """MRR@10 with its interval for every direction and system; ``as_typed``: the same data
    opened with the query words' translations off (``search.translated_words``);
    ``as_written``: opened with the query's stems off (``search.corpus_languages``: the
    index still holds its documents' stems)."""
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference

    rows = []
    for run in runs:
        started = time.perf_counter()
        row = {"direction": run["direction"], "queries": len(run["queries"]), "systems": {}}
        plan = [("bm25", app, BUNDLED, "lexical")] + [
            (f"{model} {mode}", app, model, mode)
            for model in (BUNDLED, MULTILINGUAL) for mode in ("semantic", "hybrid")]
        plan.insert(-1, (AS_TYPED, as_typed, MULTILINGUAL, "hybrid"))
        plan.insert(-1, (AS_WRITTEN, as_written, MULTILINGUAL, "hybrid"))
        plan.insert(0, (BM25_AS_WRITTEN, as_written, BUNDLED, "lexical"))
        ranks = {}
        for system, opened, model, mode in plan:
            corpus = corpus_name(model, run["docs"], run["set"])
            ranks[system] = reciprocal_ranks(opened, corpus, run["queries"], run["names"], mode)
            row["systems"][system] = mean_interval(ranks[system]).scaled(1.0, 3)
        row["differences"] = {
            f"{CANDIDATE} - {other}": paired_mean_difference(
                ranks[other], ranks[CANDIDATE]).scaled(1.0, 3)
            for other in ("bm25", f"{BUNDLED} semantic", f"{BUNDLED} hybrid", AS_TYPED,
                          AS_WRITTEN)}
        row["differences"][f"bm25 - {BM25_AS_WRITTEN}"] = paired_mean_difference(
            ranks[BM25_AS_WRITTEN], ranks["bm25"]).scaled(1.0, 3)
        row["seconds"] = round(time.perf_counter() - started, 1)
        print(line(row), flush=True)
        rows.append(row)
    return rows


def line(row: dict) -> str:
    cells = [f"{s['value']:.3f} [{s['low']:.3f}, {s['high']:.3f}]"
             for s in row["systems"].values()]
    return f"| {row['direction']} | {row['queries']} | " + " | ".join(cells) + " |"


def differences(rows: list[dict]) -> str:
    """The paired differences of ``CANDIDATE`` against each other system, as a table."""
    names = list(rows[0]["differences"])
    out = ["| direction | " + " | ".join(names) + " |", "|" + "---|" * (1 + len(names))]
    for row in rows:
        cells = [f"{d['delta']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] {d['verdict']}"
                 for d in row["differences"].values()]
        out.append(f"| {row['direction']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def header() -> str:
    return ("| direction | queries | " + " | ".join(SYSTEMS) + " |\n|"
            + "---|" * (2 + len(SYSTEMS)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300, help="pages per language (a sample)")
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    missing = [str(f) for f in FOLDERS.values() if not f.is_dir()]
    if missing:
        raise SystemExit(f"Missing {', '.join(missing)}: apt-get install -y manpages-de "
                         "manpages-fr manpages-es manpages-ja")
    from searchapp.config import Settings
    from searchapp.context import App

    started = time.perf_counter()
    pages = {lang: read_language(lang) for lang in FOLDERS}
    runs = directions(pages, args.pages, args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-languages-") as data:
        env = {"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}
        app = App(Settings.from_env(env))
        built = build(app, pages, runs)
        print(f"built {built['corpora']} corpora in {built['seconds']} s", flush=True)
        print(header(), flush=True)
        as_typed = App(Settings.from_env({**env, "SEARCHAPP_TRANSLATE_WORDS": "0"}))
        as_written = App(Settings.from_env({**env, "SEARCHAPP_SEARCH_STEMS": "0"}))
        rows = measure(app, as_typed, as_written, runs)
        for opened in (app, as_typed, as_written):
            opened.db.dispose()
    print(f"\nPaired differences (MRR@10, 95% interval, verdict):\n{differences(rows)}")
    result = {
        "collection": "Debian manual pages, man1: en /usr/share/man/man1; de, fr, es, ja from "
                      "manpages-de, manpages-fr, manpages-es, manpages-ja",
        "query": "the NAME summary without the command name",
        "document": f"the DESCRIPTION section, first {DOC_CHARS} characters",
        "pages_usable": {lang: len(p) for lang, p in pages.items()},
        "pages_per_language": args.pages, "seed": args.seed, "metric": "MRR@10",
        "interval": "percentile bootstrap 95% over queries (searchapp.evaluation.bootstrap)",
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "build": built, "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
