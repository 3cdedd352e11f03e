"""A real query → document collection from Debian's PostgreSQL manual: section headings as
queries, the sections (heading removed) as the documents they should find.

Each ``div.sect1``/``sect2``/``sect3``/``sect4`` of ``/usr/share/doc/postgresql-doc-15/html``
is one document: its own text, without its heading, its table of contents and the
text of its subsections (which are documents of their own). Its heading, without the
section number, is the query, kept only when no other section has the same heading
and it has at least two words of letters ("B-Tree" and "Examples" say too little).
Queries are split by a hash of the heading into a fixed **test** part (``--test``
queries, never judged, never trained on) and the **training** pool the judgements of
``learning_ir.py`` are drawn from, so every N uses the same test queries.

Files written under ``--out`` (default ``benchmarks/.cache/pg-sections``):
``corpus.csv`` (id, text), ``train-queries.jsonl``/``test-queries.jsonl`` (BEIR:
``_id``, ``text``), ``train-qrels.tsv``/``test-qrels.tsv`` (``query-id corpus-id
score``) and ``judgements.csv`` (query, doc_id, label: what ``judge import`` reads).

Usage:
    python benchmarks/ir_sections.py          # needs apt install postgresql-doc-15
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
OUT = ROOT / "benchmarks" / ".cache" / "pg-sections"
MIN_CHARS = 200  # a section with less own text is a heading over its subsections
NUMBER = re.compile(r"^\s*([A-Z]\.)?[\d.]+\s+")


def sections(manual: Path = MANUAL) -> list[dict]:
    """Every section of the manual: {"id", "heading", "text"} in file order."""
    from lxml import html

    found = []
    for page in sorted(manual.glob("*.html")):
        tree = html.parse(str(page))
        for div in tree.xpath('//div[starts-with(@class, "sect") and string-length(@class)=5]'):
            title = div.xpath('./div[@class="titlepage"]//h2|./div[@class="titlepage"]//h3'
                              '|./div[@class="titlepage"]//h4|./div[@class="titlepage"]//h5')
            if not title:
                continue
            heading = " ".join(title[0].text_content().split())
            heading = NUMBER.sub("", heading).strip()
            text = _own_text(div)
            anchor = div.get("id") or f"{page.stem}-{len(found)}"
            found.append({"id": f"{page.stem}#{anchor}", "heading": heading, "text": text})
    return found


def _own_text(div) -> str:
    """The section's text without its heading, table of contents and subsections."""
    parts = []
    for child in div:
        cls = child.get("class") or ""
        if cls in ("titlepage", "toc") or re.fullmatch(r"sect\d", cls):
            continue
        parts.append(child.text_content())
    return " ".join(" ".join(parts).split())


def usable_query(heading: str) -> bool:
    """At least two words of letters: a heading a person could search by."""
    return len(re.findall(r"[A-Za-z]{2,}", heading)) >= 2


def is_test(heading: str, fraction: float) -> bool:
    digest = hashlib.sha256(f"ir-sections-test:{heading.lower()}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def build(out: Path, test: int = 300) -> dict:
    """Write the collection's files under ``out``; returns their counts."""
    found = sections()
    documents = [s for s in found if len(s["text"]) >= MIN_CHARS]
    counts = Counter(s["heading"].lower() for s in found)
    queries = [s for s in documents if counts[s["heading"].lower()] == 1
               and usable_query(s["heading"])]
    fraction = test / len(queries)
    # ranked by hash so that exactly ``test`` queries are the test part
    ranked = sorted(queries, key=lambda s: hashlib.sha256(
        f"ir-sections-test:{s['heading'].lower()}".encode()).digest())
    test_part, train_part = ranked[:test], ranked[test:]
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "text"])
        writer.writerows([d["id"], d["text"]] for d in documents)
    for name, part in (("train", train_part), ("test", test_part)):
        with open(out / f"{name}-queries.jsonl", "w") as f:
            for i, s in enumerate(part):
                f.write(json.dumps({"_id": f"{name}-{i}", "text": s["heading"]}) + "\n")
        with open(out / f"{name}-qrels.tsv", "w") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            for i, s in enumerate(part):
                f.write(f"{name}-{i}\t{s['id']}\t1\n")
    with open(out / "judgements.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["query", "doc_id", "label"])
        writer.writerows([s["heading"], s["id"], 1] for s in train_part)
    summary = {"documents": len(documents), "sections": len(found),
               "train_queries": len(train_part), "test_queries": len(test_part),
               "fraction_test": round(fraction, 3)}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--test", type=int, default=300, help="test queries")
    args = parser.parse_args()
    if not MANUAL.is_dir():
        raise SystemExit(f"{MANUAL} is missing: apt install postgresql-doc-15")
    print(json.dumps(build(args.out, args.test)))


if __name__ == "__main__":
    main()
