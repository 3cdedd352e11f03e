"""Every CSV the app or the CLI writes keeps formula-like text inert in a spreadsheet.

Cells starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return get a
leading ``'``; numbers (negative scores, map coordinates) stay numbers. The
duplicates page's download buttons call the same ``pairs_csv``/``groups_csv``
as ``searchapp duplicates --out``, so the CLI tests cover both.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd

from searchapp.cli import main
from searchapp.corpora.csv_safe import FORMULA_STARTS, safe_csv
from searchapp.store import repo
from searchapp.store.repo import NewDocument

MODEL = "all-MiniLM-L6-v2"
RISKY = ["=HYPERLINK(\"http://x\",\"y\")", "+1+2", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd"]


def rows_of(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def file_rows(path) -> list[dict[str, str]]:
    """The rows of a CSV file, its line endings untranslated (a text may hold a CR)."""
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def assert_inert(rows: list[dict[str, str]], columns: list[str]) -> None:
    """No text cell in ``columns`` starts like a formula."""
    for row in rows:
        for col in columns:
            assert not row[col].startswith(FORMULA_STARTS), (col, row[col])


def test_safe_csv_prefixes_formula_text_and_keeps_numbers():
    frame = pd.DataFrame({"text": [*RISKY, "plain", " =spaced"], "score": np.linspace(-1, 1, 8),
                          "mixed": [None, True, 3, "=x", "ok", "-", "", "@"]})
    rows = rows_of(safe_csv(frame.rename(columns={"mixed": "=mixed"})))
    assert [r["text"] for r in rows] == ["'" + t for t in RISKY] + ["plain", " =spaced"]
    assert rows[0]["score"] == "-1.0"  # a number, not text: left alone
    assert [r["'=mixed"] for r in rows] == ["", "True", "3", "'=x", "ok", "'-", "", "'@"]


def make_corpus(app, name: str, docs: list[tuple[str, str]], vectors: np.ndarray) -> None:
    """A corpus of (id, text) documents that carry the given vectors (no encoder)."""
    model = app.model_ref(MODEL)
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        repo.add_documents(s, corpus, [NewDocument(i, t) for i, t in docs])
        s.flush()
        by_ext = {ext: i for i, (ext, _) in repo.document_texts(s, corpus.id).items()}
        repo.save_embeddings(s, corpus.id, model.id, [by_ext[i] for i, _ in docs], vectors)


def two_topics(n: int = 6, dim: int = 384) -> np.ndarray:
    """Unit vectors: the first half almost equal, the second half almost equal."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(2, dim))
    v = np.repeat(centres, n // 2, axis=0) + 0.01 * rng.normal(size=(n, dim))
    return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)


def test_duplicates_and_clusters_csv_from_the_cli(app, tmp_path, monkeypatch, capsys):
    docs = [(f"{RISKY[i]}-id", f"{RISKY[i]} text {i}") for i in range(6)]
    make_corpus(app, "risky", docs, two_topics())
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    out = tmp_path / "dups.csv"
    assert main(["duplicates", "--corpus", "risky", "--threshold", "0.9", "--out",
                 str(out)]) == 0
    pairs = file_rows(out)
    groups = file_rows(tmp_path / "dups-groups.csv")
    assert len(pairs) == 6 and len(groups) == 6
    assert_inert(pairs, ["a", "b", "a_text", "b_text"])
    assert_inert(groups, ["representative", "member", "text"])
    assert {p["a_text"] for p in pairs} | {p["b_text"] for p in pairs} == {
        "'" + t for _, t in docs}

    clusters = tmp_path / "clusters.csv"
    assert main(["clusters", "--corpus", "risky", "--method", "kmeans", "--k", "2",
                 "--projection", "pca", "--out", str(clusters)]) == 0
    rows = file_rows(clusters)
    assert sorted(r["id"] for r in rows) == sorted("'" + i for i, _ in docs)
    assert any(float(r["x"]) < 0 for r in rows)  # coordinates stay numbers
    capsys.readouterr()
