"""Evaluation of a corpus on its judgements and on benchmark files, through the real search
code, SQLite, hnswlib and the bundled encoder; the CLI's ``evaluate --corpus``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from searchapp.cli import main
from searchapp.evaluation.corpus import compare, evaluate
from searchapp.evaluation.encoded import encode_corpus, handle_for
from searchapp.evaluation.service import judgement_items
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service as judgements

TOPICS = {
    "password": ["How do I reset my password?", "I forgot my password and cannot log in.",
                 "Steps to change a lost account password"],
    "refund": ["When will my refund arrive?", "My money back has not reached my card yet.",
               "How long does a reimbursement take?"],
    "email": ["How can I change the email address on my account?",
              "Update the e-mail linked to my profile", "I want a different contact email."],
    "cancel": ["How do I cancel my subscription?", "Stop my monthly plan from renewing",
               "End my membership before the next billing date"],
    "invoice": ["Where can I download my invoice?", "I need a PDF of last month's bill",
                "Get a copy of my receipt for taxes"],
    "shipping": ["My parcel has not been delivered", "The package is late and tracking is stuck",
                 "Where is my order? It should have arrived."],
    "language": ["How do I switch the app to French?", "Change the interface language",
                 "The menus are in the wrong language"],
    "delete": ["Please delete my account and all my data", "How can I remove my profile for good?",
               "Erase everything you store about me"],
}
QUERIES = {"password": "forgotten login credentials", "refund": "refund still missing",
           "email": "new email address for my account", "cancel": "unsubscribe from the plan",
           "invoice": "download a bill", "shipping": "delivery is delayed",
           "language": "app language setting", "delete": "remove my personal data"}
LONG = ("The committee reviewed the quarterly budget and moved on to the next point. " * 40
        + "Finally the penguins at the zoo were fed fresh herring by their keeper.")


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    return app


def make_corpus(app, name: str = "faq") -> None:
    rows = [{"id": f"{topic}-{i}", "text": text} for topic, texts in TOPICS.items()
            for i, text in enumerate(texts)]
    rows.append({"id": "minutes", "text": LONG})
    summary = upload(app, read_table(pd.DataFrame(rows).to_csv(index=False).encode(),
                                     f"{name}.csv"), name)
    assert run_until_done(app, summary.job_id).status == "succeeded"


def judge(app, name: str = "faq") -> None:
    lines = ["query,doc_id,label"]
    for topic, query in QUERIES.items():
        lines += [f"{query},{topic}-0,2", f"{query},{topic}-1,1", f"{query},{topic}-2,1"]
    lines.append("penguins fed fish,minutes,1")
    lines.append("forgotten login credentials,refund-0,0")
    judgements.import_csv(app, name, "\n".join(lines).encode(), "queries.csv")
    pairs = ["a_id,b_id,label"]
    for topic in TOPICS:
        pairs += [f"{topic}-0,{topic}-1,1", f"{topic}-1,{topic}-2,1"]
    names = list(TOPICS)
    pairs += [f"{a}-0,{b}-0,0" for a, b in zip(names, names[1:] + names[:1], strict=True)]
    pairs += [f"{a}-2,{b}-1,0" for a, b in zip(names, names[2:] + names[:2], strict=True)]
    judgements.import_csv(app, name, "\n".join(pairs).encode(), "pairs.csv")


def test_a_corpus_encoded_in_memory_ranks_exactly_as_the_stored_one(app):
    """What a candidate model is judged on is what users would get after the switch."""
    make_corpus(app)
    judge(app)
    items = judgement_items(app, "faq")
    stored = evaluate(app, handle_for(app, "faq"), items, rounds=50)
    fresh = encode_corpus(app, "faq", "all-MiniLM-L6-v2")
    assert fresh.passages is not None and fresh.passages.count >= 2  # the long minutes
    encoded = evaluate(app, fresh, items, rounds=50)
    for mode in ("semantic", "lexical", "hybrid"):
        for metric, values in stored.per_query[mode].items():
            np.testing.assert_allclose(encoded.per_query[mode][metric], values, atol=1e-9)
    np.testing.assert_allclose(encoded.pairs.cosines, stored.pairs.cosines, atol=1e-5)
    assert stored.per_query["semantic"]["recall@10"][stored.queries.index(
        "penguins fed fish")] == 1.0  # found by its last passage


def test_a_random_model_is_judged_worse_side_by_side(app, tiny_bert):
    make_corpus(app)
    judge(app)
    items = judgement_items(app, "faq")
    current = evaluate(app, handle_for(app, "faq"), items, rounds=300)
    random_model = evaluate(app, handle_for(app, "faq", str(tiny_bert)), items, rounds=300)
    comparison = compare(current, random_model)
    assert comparison.verdict == "worse"
    assert comparison.pairs["ap"].high < 0  # the whole interval of the difference below 0
    assert comparison.queries["lexical"]["ndcg@10"].verdict == "not distinguishable"  # words
    assert "is worse than all-MiniLM-L6-v2 on the held-out judgements" in comparison.sentence()
    assert compare(current, current).verdict == "not distinguishable"


def test_cli_evaluate_reports_every_mode_and_the_pairs_with_intervals(app, monkeypatch,
                                                                        capsys):
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    make_corpus(app)
    judge(app)
    assert main(["evaluate", "--corpus", "faq", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == "all-MiniLM-L6-v2" and report["judgements"] == 26 + 32
    assert report["queries"]["n"] == 9 and set(report["queries"]["modes"]) == {
        "semantic", "lexical", "hybrid"}
    for metrics in report["queries"]["modes"].values():
        for metric in ("ndcg@10", "mrr@10", "recall@10", "recall@100"):
            est = metrics[metric]
            assert est["low"] <= est["value"] <= est["high"] and est["n"] == 9
    assert report["queries"]["modes"]["semantic"]["recall@100"]["value"] == 100.0
    pairs = report["pairs"]
    assert pairs["n"] == 32 and pairs["positives"] == 16
    assert pairs["ap"]["value"] > 90 and 0 < pairs["threshold"]["value"] < 1
    assert [r.model_name for r in judgements.evaluation_runs(app, "faq")] == ["all-MiniLM-L6-v2"]

    assert main(["evaluate", "--corpus", "faq"]) == 0
    out = capsys.readouterr().out
    assert "Judged queries: 9" in out and "NDCG@10" in out and "hybrid" in out
    assert "Judged pairs: 32 (16 duplicates)" in out and "AT_THRESHOLD" in out
    assert "Note:" not in out  # the bundled model learned nothing from these judgements


def test_a_model_measured_on_the_judgements_it_learned_from_is_said_to_be_optimistic(
        app, monkeypatch, capsys):
    import shutil

    from searchapp.embedding.models import model_path, read_card, write_card

    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    make_corpus(app)
    judge(app)
    tuned = app.settings.models_dir / "faq-v1"  # as a learning job of this corpus saves it
    shutil.copytree(model_path("all-MiniLM-L6-v2", app.settings), tuned)
    write_card(tuned, {**read_card(tuned), "name": "faq-v1", "source": "judgements",
                       "corpus": "faq", "data": {"split": {"train": {"judgements": 40},
                                                           "held": {"judgements": 12}}}})
    assert main(["evaluate", "--corpus", "faq", "--model", "faq-v1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["warning"].startswith("faq-v1 learned from 40 of these judgements")
    assert "(on the 12 held out of training)" in report["warning"]
    [run] = judgements.evaluation_runs(app, "faq", "faq-v1")
    assert run.metrics["warning"] == report["warning"]  # the Evaluate page shows it


def test_benchmark_files_are_evaluated_on_the_corpus(app, monkeypatch, capsys, tmp_path):
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    make_corpus(app)
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps({"_id": f"q-{t}", "text": q})
                                 for t, q in QUERIES.items()) + "\n")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"q-{t}\t{t}-{i}\t1\n" for t in TOPICS for i in range(3)) + "q-refund\tgone-7\t1\n")
    assert main(["evaluate", "--corpus", "faq", "--queries", str(queries), "--qrels",
                 str(qrels), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["queries"]["n"] == 8 and report["pairs"] is None
    assert report["missing_documents"] == 1  # gone-7 is not in the corpus: left out, counted
    # ... and not counted against recall: every document that is there is found in a corpus
    # of 25
    assert report["queries"]["modes"]["semantic"]["recall@100"]["value"] == 100.0
    assert "benchmark files queries.jsonl, qrels.tsv" in report["note"]

    qrels.write_text("query-id\tcorpus-id\tscore\nq-nope\tfaq-1\t1\n")
    assert main(["evaluate", "--corpus", "faq", "--queries", str(queries), "--qrels",
                 str(qrels)]) == 1
    assert "judges 1 query id(s) the queries file does not have, e.g. 'q-nope'" in \
        capsys.readouterr().err


@pytest.mark.parametrize(("csv", "message"), [
    (None, "Nothing to evaluate"),
    (b"a_id,b_id,label\npassword-0,password-1,1\nrefund-0,refund-1,1\n",
     "need both answers to measure AP"),
])
def test_nothing_to_measure_is_a_one_line_error(app, monkeypatch, capsys, csv, message):
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    make_corpus(app)
    if csv:
        judgements.import_csv(app, "faq", csv, "pairs.csv")
    assert main(["evaluate", "--corpus", "faq"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err
