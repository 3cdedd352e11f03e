"""Hybrid fusion per corpus and the fast evaluation path, on real SQLite, hnswlib and the
bundled encoder: evaluate's rankings are search()'s, a fit moves the weights only when the
held-out queries say so, and hybrid search uses the stored fusion."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from searchapp.cli import main
from searchapp.evaluation.candidates import candidate_lists, ranking
from searchapp.evaluation.corpus import evaluate
from searchapp.evaluation.encoded import handle_for
from searchapp.evaluation.fusion_fit import fit_fusion
from searchapp.evaluation.judged import Items, JudgedQuery
from searchapp.evaluation.ranking import metrics_table
from searchapp.evaluation.service import judgement_items
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.judgements import service as judgements
from searchapp.search.fusion import DEFAULT, Fusion, fusion_for, save_fusion
from searchapp.search.service import open_corpus, search
from tests.test_evaluate_corpus import QUERIES, judge, make_corpus

# made-up code words: only the lexical list can find the section that names one
CODES = ["zorblat", "quenvik", "drassel", "mirrowen", "palqueth", "vostrane", "kelpindor",
         "brastlow", "yuvenna", "torquill", "fennislap", "grobanth", "hestivar", "jumbrel",
         "lorvatic", "nepsidor", "ostrabel", "plimvar", "quorrant", "rustivel", "sambrecht",
         "tavrisol", "umbrellix", "vandorix", "wespilot", "xanthorel", "yorbelith", "zintavel",
         "arbostin", "belquarry", "cindravel", "dolmisar", "estravon", "fandequil", "gistrobel",
         "harnovel", "istravine", "jobresk", "kandulve", "lempastor"]
SUBJECTS = ["refund policy", "password reset", "shipping delay", "invoice download",
            "account deletion", "language setting", "subscription renewal", "email change"]
PARAPHRASES = {"refund policy": ["Money back rules for returned goods",
                                 "When customers get reimbursed for purchases"],
               "password reset": ["Recovering access when the login secret is forgotten",
                                  "Choosing a new secret after losing the old one"],
               "shipping delay": ["Parcels that arrive later than promised",
                                  "Late deliveries and stuck tracking"],
               "invoice download": ["Getting a PDF copy of a bill", "Where receipts are kept"],
               "account deletion": ["Erasing a profile and its data for good",
                                    "Closing the user record permanently"],
               "language setting": ["Switching the interface to French",
                                    "Menus shown in another tongue"],
               "subscription renewal": ["Plans that bill again each month",
                                        "Stopping automatic charges of a membership"],
               "email change": ["Updating the contact address of a profile",
                                "Using a different mailbox for notices"]}
GARDEN = ("The tomatoes in the north bed need staking before the summer storms, and the "
          "compost heap should be turned every second week so that it does not smell.")


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    return app


def _upload(app, rows: list[dict], name: str) -> None:
    csv = pd.DataFrame(rows).to_csv(index=False).encode()
    assert run_until_done(app, upload(app, read_table(csv, f"{name}.csv"), name).job_id
                          ).status == "succeeded"


def make_codes_corpus(app, name: str = "codes") -> dict[str, str]:
    """Sections named by a code word, about gardening; paraphrases of each query's subject.
    Returns query → the relevant section's id."""
    rows = [{"id": f"para-{s.replace(' ', '-')}-{i}", "text": text}
            for s, texts in PARAPHRASES.items() for i, text in enumerate(texts)]
    queries = {}
    for i, code in enumerate(CODES):
        rows.append({"id": f"code-{code}", "text": f"{GARDEN} Section {code}, see above."})
        queries[f"{code} {SUBJECTS[i % len(SUBJECTS)]}"] = f"code-{code}"
    _upload(app, rows, name)
    return queries


def code_items(queries: dict[str, str]) -> Items:
    return Items(queries=[JudgedQuery(q, {d: 1}) for q, d in queries.items()])


# ---- the fast path ranks as search() does -------------------------------------------------
# equal weights make ties (ranks 1 and 2 in one list, 2 and 1 in the other): broken as search
@pytest.mark.parametrize("fusion", [DEFAULT, Fusion(1.0, 0.5, 3, 20, "fitted"),
                                    Fusion(1.0, 1.0, 10, 50, "fitted")])
def test_rankings_from_cached_lists_equal_search(app, fusion):
    make_corpus(app)
    handle = open_corpus(app, "faq")
    queries = [*QUERIES.values(), "penguins fed fish", "password 2024 refund"]
    lists = candidate_lists(app, handle, queries, 100)
    for q, cached in zip(queries, lists, strict=True):
        for mode in ("semantic", "lexical", "hybrid"):
            for k in (100, 5):
                wanted = [h.doc_id for h in search(app, handle, q, k=k, mode=mode,
                                                   fusion=fusion)]
                assert ranking(cached, mode, fusion, k).tolist() == wanted, (q, mode, k)


def test_ties_are_broken_as_search_breaks_them():
    """Equal fused scores (ranks 1 and 3 in one list, 3 and 1 in the other): the better
    semantic rank first, then lexical-only documents in lexical order, as search's _rank."""
    from searchapp.evaluation.candidates import QueryLists
    from searchapp.search.modes import mode_named
    from searchapp.search.service import _Candidate, _rank

    semantic, lexical = [7, 8, 9], [9, 5, 7, 6]
    lists = QueryLists("ties", np.array(semantic), np.array(lexical))
    for fusion in (Fusion(1.0, 1.0, 10, 50), Fusion(1.0, 1.0, 10, 2), DEFAULT):
        candidates = [_Candidate(d, 1.0 - i / 10)
                      for i, d in enumerate(semantic[:max(5, fusion.depth)])]
        wanted = [r.doc for r in _rank(mode_named("hybrid"), candidates,
                                       [(d, 1.0) for d in lexical[:max(5, fusion.depth)]], 5,
                                       "ties", fusion)]
        assert ranking(lists, "hybrid", fusion, 5).tolist() == wanted


def test_evaluate_gives_the_numbers_search_per_query_gave(app):
    """The old path: search() per query per mode, 100 deep; the new one must agree exactly."""
    make_corpus(app)
    judge(app)
    items = judgement_items(app, "faq")
    handle = handle_for(app, "faq")
    result = evaluate(app, handle, items, rounds=50)
    grades = [{d: g for d, g in q.grades.items()} for q in items.queries]
    for mode in ("semantic", "lexical", "hybrid"):
        rankings = [[h.id for h in search(app, handle, q.query, k=100, mode=mode)]
                    for q in items.queries]
        old = metrics_table(rankings, grades)
        for metric, values in old.items():
            np.testing.assert_array_equal(result.per_query[mode][metric], values)
    assert result.fusion == DEFAULT.as_dict()


# ---- the fit ---------------------------------------------------------------------------------
def test_the_fit_lowers_the_semantic_weight_when_the_judgements_favour_words(app):
    queries = make_codes_corpus(app)
    items = code_items(queries)
    before = fit = fit_fusion(app, "codes", items=items)
    assert fit.kept, fit.sentence()
    assert fit.previous == DEFAULT and fit.fusion.source == "fitted"
    assert fit.fusion.semantic_weight < DEFAULT.semantic_weight
    assert fit.gain["low"] > 0 and fit.gain["b"]["value"] > fit.gain["a"]["value"]
    handle = open_corpus(app, "codes")
    assert fusion_for(app, handle.corpus_id, handle.model.name) == fit.fusion  # stored
    first = {f: sum(search(app, "codes", q, k=1, fusion=f)[0].id == d
                    for q, d in queries.items()) for f in (None, DEFAULT)}
    assert first[None] > first[DEFAULT] + 5  # hybrid search uses the fitted fusion
    again = fit_fusion(app, "codes", items=items)  # measured against the fitted one now
    assert again.previous == before.fusion and not again.kept
    assert fusion_for(app, handle.corpus_id, handle.model.name) == before.fusion


def test_the_fit_keeps_the_fusion_in_use_when_held_out_queries_show_no_gain(app):
    make_codes_corpus(app)
    # paraphrase queries that every fusion answers alike: no gain to find
    items = Items(queries=[JudgedQuery(text, {f"para-{s.replace(' ', '-')}-{i}": 1})
                           for s, texts in PARAPHRASES.items() for i, text in enumerate(texts)]
                  + [JudgedQuery(f"{text} please", {f"para-{s.replace(' ', '-')}-{i}": 1})
                     for s, texts in PARAPHRASES.items() for i, text in enumerate(texts)])
    fit = fit_fusion(app, "codes", items=items)
    assert not fit.kept and fit.fusion == DEFAULT and fit.gain is not None
    assert "not enough evidence" in fit.reason
    handle = open_corpus(app, "codes")
    assert fusion_for(app, handle.corpus_id, handle.model.name) == DEFAULT


def test_too_few_judged_queries_leave_the_defaults(app):
    queries = make_codes_corpus(app)
    fit = fit_fusion(app, "codes", items=code_items(dict(list(queries.items())[:4])))
    assert not fit.kept and fit.gain is None and "a fusion fit needs 5" in fit.reason
    assert fit.fusion == DEFAULT


def test_hybrid_search_uses_the_stored_fusion(app):
    queries = make_codes_corpus(app)
    handle = open_corpus(app, "codes")
    def found_first() -> int:
        return sum(search(app, "codes", q, k=1)[0].id == d for q, d in queries.items())

    before = found_first()
    save_fusion(app, handle.corpus_id, handle.model.name, Fusion(0.25, 0.25, 10, 50, "fitted"))
    assert found_first() > before + 5
    save_fusion(app, handle.corpus_id, handle.model.name, None)
    assert found_first() == before


def test_cli_fits_the_fusion_and_evaluate_shows_it(app, monkeypatch, capsys):
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    queries = make_codes_corpus(app)
    lines = ["query,doc_id,label"] + [f"{q},{d},1" for q, d in queries.items()]
    judgements.import_csv(app, "codes", "\n".join(lines).encode(), "queries.csv")
    assert main(["evaluate", "--corpus", "codes", "--fit-fusion", "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)
    assert fit["kept"] and fit["fusion"]["source"] == "fitted"
    assert main(["evaluate", "--corpus", "codes", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["fusion"]["source"] == "fitted"
    assert report["fusion_gain"]["delta"] == fit["gain"]["delta"]
    assert main(["evaluate", "--corpus", "codes"]) == 0
    out = capsys.readouterr().out
    assert "Hybrid fusion: fitted" in out and "held-out hybrid nDCG@10" in out
    assert main(["evaluate", "--corpus", "codes", "--reset-fusion"]) == 0
    assert "uses the default fusion (default: semantic weight 3" in capsys.readouterr().out
    handle = open_corpus(app, "codes")
    assert fusion_for(app, handle.corpus_id, handle.model.name) == DEFAULT
