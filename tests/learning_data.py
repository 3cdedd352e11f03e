"""A small corpus with judgements of both kinds, for the learning jobs' tests (deterministic).

Forty topics, each two documents that say the same thing in other words; per topic one
judged query (its two documents relevant; for every other topic a neighbour's document
judged not relevant) and two judged pairs (the topic's documents duplicates, the first
documents of two neighbouring topics not).
"""

from __future__ import annotations

import pandas as pd

from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service as judgements

NOUNS = ["cat", "dog", "car", "tree", "river", "music", "bread", "phone", "snow", "ship",
         "chair", "lamp", "apple", "train", "book", "cloud", "garden", "winter", "coffee", "road"]
TOPICS = 40


def _words(i: int) -> tuple[str, str, str]:
    return NOUNS[i % 20], NOUNS[(i * 7 + 3) % 20], NOUNS[(i * 3 + 11) % 20]


def documents() -> list[dict]:
    rows = []
    for i in range(TOPICS):
        a, b, c = _words(i)
        rows.append({"id": f"t{i}-a", "text": f"The {a} is next to the {b} by the {c}, topic {i}."})
        rows.append({"id": f"t{i}-b", "text": f"Beside the {b} you find the {a} and a {c} ({i})."})
    return rows


def queries_csv() -> bytes:
    lines = ["query,doc_id,label"]
    for i in range(TOPICS):
        a, b, _ = _words(i)
        query = f"where is the {a} near the {b} {i}"
        lines += [f"{query},t{i}-a,2", f"{query},t{i}-b,1"]
        if i % 2 == 0:  # half the queries have a document judged not relevant
            lines.append(f"{query},t{(i + 1) % TOPICS}-a,0")
    return ("\n".join(lines) + "\n").encode()


def pairs_csv() -> bytes:
    lines = ["a_id,b_id,label"]
    for i in range(TOPICS):
        lines += [f"t{i}-a,t{i}-b,1", f"t{i}-a,t{(i + 1) % TOPICS}-a,0"]
    return ("\n".join(lines) + "\n").encode()


def make_learning_corpus(app, name: str = "topics", model: str | None = None,
                         kinds: tuple[str, ...] = ("query", "pair")) -> None:
    """Upload, embed (with ``model``) and judge the corpus."""
    csv = pd.DataFrame(documents()).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, f"{name}.csv"), name, model=model)
    job = run_until_done(app, summary.job_id)
    assert job.status == "succeeded", job.error
    if "query" in kinds:
        judgements.import_csv(app, name, queries_csv(), "queries.csv")
    if "pair" in kinds:
        judgements.import_csv(app, name, pairs_csv(), "pairs.csv")
