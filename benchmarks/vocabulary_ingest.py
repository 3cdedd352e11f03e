"""The cost of keeping the vocabulary on ingest: 20,000 documents inserted with and without.

Documents: paragraphs of the PostgreSQL manual's HTML pages (``/usr/share/doc/
postgresql-doc-*/html``, each ``<p>``'s text, repeated in order until ``--documents``),
written by the store's own writer (``repo.add_documents``: batches of 5,000, the full-text
index in the same transaction) into a fresh SQLite file, once as the app does it and once
with the vocabulary's hook (``vocabulary.index_new``) made a no-op. Each run ``--repeat``
times, alternating; the medians are reported.

Usage:
    python benchmarks/vocabulary_ingest.py [--documents 20000] [--repeat 3]
Writes benchmarks/results/vocabulary_ingest.json.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import statistics
import tempfile
import time
from pathlib import Path
from unittest import mock

from lxml import html as lxml_html

from searchapp.store import repo, vocabulary
from searchapp.store.db import Database

RESULTS = Path(__file__).parent / "results" / "vocabulary_ingest.json"


def paragraphs(n: int) -> list[str]:
    folder = sorted(glob.glob("/usr/share/doc/postgresql-doc-*/html"))[0]
    found: list[str] = []
    for path in sorted(Path(folder).glob("*.html")):
        tree = lxml_html.fromstring(path.read_bytes())
        found += [" ".join(p.text_content().split()) for p in tree.iter("p")]
    found = [p for p in found if len(p) > 40]
    return [found[i % len(found)] + f" ({i})" for i in range(n)]


def insert_seconds(texts: list[str], with_vocabulary: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{tmp}/v.db")
        docs = [repo.NewDocument(f"d{i}", t) for i, t in enumerate(texts)]
        hook = contextlib.nullcontext() if with_vocabulary else \
            mock.patch.object(vocabulary, "index_new", lambda *a: None)
        with hook:
            started = time.perf_counter()
            with db.session() as s:
                c = repo.get_or_create_corpus(s, "pg", "m")
                repo.add_documents(s, c, docs)
            seconds = time.perf_counter() - started
        db.dispose()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    texts = paragraphs(args.documents)
    runs: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(args.repeat):
        runs["without"].append(insert_seconds(texts, False))
        runs["with"].append(insert_seconds(texts, True))
    med = {k: statistics.median(v) for k, v in runs.items()}
    result = {"documents": len(texts), "characters": sum(map(len, texts)),
              "seconds": {k: [round(x, 3) for x in v] for k, v in runs.items()},
              "median_seconds": {k: round(v, 3) for k, v in med.items()},
              "extra_share": round(med["with"] / med["without"] - 1, 3),
              "documents_per_second": {k: round(len(texts) / v) for k, v in med.items()}}
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
