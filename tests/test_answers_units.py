"""The parts of answers that need no corpus: sentences planned and encoded with their passage,
when a query asks for an answer, the calibrated threshold, the de-duplication."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from searchapp.answers.finder import Answer, distinct
from searchapp.answers.questions import reads_as_question
from searchapp.answers.threshold import MIN_EACH, calibrate
from searchapp.embedding.passages import PassagePlan, embed_documents, sentence_plan
from searchapp.intake.formats.document import Extracted, Part
from tests.test_passages_layout import Recorder


def test_sentences_are_encoded_once_each_alone():
    doc = Extracted([Part("Run pg_dump. Keep the file.", section="Backups > SQL Dump"),
                     Part("Feed the file to psql.", section="Backups > Restoring")])
    encoder = Recorder()
    out = embed_documents(encoder, [doc.text, "One short row."], layouts=[doc.layout, None],
                          sentences=True)
    assert encoder.seen[3:] == ["Run pg_dump.", "Keep the file."]
    # the part of one sentence and the one-sentence row are their own passage's vector
    by_passage = {number: (spans, vectors) for number, spans, vectors in out.sentences[0]}
    assert [doc.text[a:b] for a, b in by_passage[0][0]] == ["Run pg_dump.", "Keep the file."]
    assert [doc.text[a:b] for a, b in by_passage[1][0]] == ["Feed the file to psql."]
    [(number, spans, vectors)] = out.sentences[1]
    assert (number, spans.tolist()) == (0, [[0, 14]])
    assert np.array_equal(vectors[0], out.vectors[1])
    assert embed_documents(Recorder(), ["A. B."]).sentences == {}  # not asked: none


@given(st.lists(st.integers(0, 40), min_size=1, max_size=6), st.text(max_size=120))
def test_every_sentence_lands_in_a_passage_that_holds_its_start(cuts, text):
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    spans = [(a, b) for a, b in pairwise(bounds) if b > a] or [(0, 0)]
    for number, found in sentence_plan([text], [PassagePlan(spans)]).get(0, []):
        for a, _ in found:
            start, end = spans[number]
            assert start <= a < end or number == len(spans) - 1


@given(st.text(max_size=300))
def test_any_query_is_read_without_an_error(query):
    assert reads_as_question(query) in (True, False)


def test_questions_and_requests_ask_for_an_answer_keywords_do_not():
    asks = ["how do I change the default port", "What is a bare repository?", "can I undo a push",
            "explain the difference between merge and rebase", "Wo finde ich die Rechnung?"]
    keywords = ["postgres port", "ERR-40417", "git rebase", "invoice march", "C++"]
    assert all(reads_as_question(q) for q in asks)
    assert not any(reads_as_question(q) for q in keywords)


@given(st.lists(st.tuples(st.floats(-1, 1), st.integers(0, 1)), max_size=40))
def test_a_calibrated_threshold_is_one_of_the_judged_scores_with_enough_of_each(judged):
    scores, labels = [s for s, _ in judged], [y for _, y in judged]
    found = calibrate(scores, labels)
    if min(labels.count(0), labels.count(1)) < MIN_EACH:
        assert found is None
    else:
        assert found in scores
        assert any(y == 1 and s >= found for s, y in judged)


def test_answers_that_say_the_same_are_kept_once_the_best_first():
    a, b = np.array([1.0, 0.0], np.float32), np.array([0.0, 1.0], np.float32)
    found = [Answer("Hold reset for ten seconds.", "x", 0, 1, 0.8, 0.8, 1, vector=a),
             Answer("hold reset for ten seconds", "y", 0, 1, 0.7, 0.7, 2, vector=b),
             Answer("Press and hold reset, 10 s.", "z", 0, 1, 0.6, 0.6, 3, vector=a * 0.99),
             Answer("Invoices come monthly.", "w", 0, 1, 0.5, 0.5, 4, vector=b)]
    assert [x.doc_id for x in distinct(found)] == ["x", "w"]


def test_a_heading_is_a_unit_of_its_own_and_no_sentence_crosses_a_section():
    doc = Extracted([Part("Keeping your system current\nOne of our goals is a smooth upgrade",
                          section="Chapter 9 > Keeping your system current"),
                     Part("Holding a package back\nMark it held with apt-mark",
                          section="Chapter 9 > Holding a package back")])
    out = embed_documents(Recorder(), [doc.text], layouts=[doc.layout], sentences=True)
    said = [doc.text[a:b] for _, spans, _ in out.sentences[0] for a, b in spans]
    assert said == ["Keeping your system current", "One of our goals is a smooth upgrade",
                    "Holding a package back", "Mark it held with apt-mark"]
