"""``searchapp judge``: add, remove, list, export, import, next and groups from the command line."""

from __future__ import annotations

import json

import pytest

from searchapp.cli import main
from tests.test_duplicates import FAQ, make_corpus


@pytest.fixture
def cli_app(app, bundled_encoder, monkeypatch):
    make_corpus(app, bundled_encoder, "faq", FAQ)
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)  # keep the loaded encoder
    return app


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_judgements_are_added_listed_and_undone_from_the_command_line(cli_app, capsys):
    code, out, _ = run(capsys, "judge", "add", "--corpus", "faq", "--query", "reset password",
                       "--doc", "p3", "--label", "relevant")
    assert code == 0 and out.strip() == \
        "Judgement 1: [p3] is relevant for 'reset password'."
    code, out, _ = run(capsys, "judge", "add", "--corpus", "faq", "--a", "p4", "--b", "p1",
                       "--label", "duplicate", "--json")
    assert code == 0 and json.loads(out)["a"] == "p1" and json.loads(out)["label"] == 1
    code, out, _ = run(capsys, "judge", "list", "--corpus", "faq", "--json")
    listed = json.loads(out)
    assert [(j["kind"], j["source"]) for j in listed["judgements"]] == \
        [("query", "cli"), ("pair", "cli")]
    assert listed["counts"]["relevant"] == 1 and listed["counts"]["duplicate"] == 1
    code, out, _ = run(capsys, "judge", "list", "--corpus", "faq")
    assert "2 judgements: 1 of query results (1 relevant, 1 queries), 1 of pairs" in out
    assert run(capsys, "judge", "remove", "--corpus", "faq", "1")[:2] == \
        (0, "Removed judgement 1.\n")
    code, _, err = run(capsys, "judge", "remove", "--corpus", "faq", "1")
    assert code == 1 and err.startswith("error: Corpus 'faq' has no judgement 1")


@pytest.mark.parametrize(("argv", "words"), [
    (["--a", "p1", "--b", "zz", "--label", "1"], "error: No document 'zz' in corpus 'faq'"),
    (["--a", "p1", "--b", "p2", "--label", "maybe"], "error: label 'maybe' is not a label"),
    (["--query", "x", "--doc", "p1", "--label", "5"], "error: A query judgement's label"),
    (["--label", "1"], "error: Say what is judged"),
])
def test_a_bad_judgement_is_one_error_line_and_stores_nothing(cli_app, capsys, argv, words):
    code, _, err = run(capsys, "judge", "add", "--corpus", "faq", *argv)
    assert code == 1 and err.startswith(words) and err.count("\n") == 1
    assert json.loads(run(capsys, "judge", "list", "--corpus", "faq", "--json")[1]) \
        ["counts"]["total"] == 0


def test_an_export_imports_back_and_a_bad_file_names_its_line(cli_app, capsys, tmp_path):
    good = tmp_path / "pairs.csv"
    good.write_text("a_id,b_id,label\np1,p3,yes\nf1,f2,1\nc1,c2,no\n", encoding="utf-8")
    code, out, _ = run(capsys, "judge", "import", "--corpus", "faq", str(good))
    assert code == 0 and out.startswith("Imported 3 judgements into 'faq' (0 of query results, "
                                        "3 of pairs): 3 new, 0 changed, 0 already stored.")
    code, exported, _ = run(capsys, "judge", "export", "--corpus", "faq")
    assert exported.splitlines()[0] == "kind,query,doc_id,a_id,b_id,answer,label,source,created_at"
    back = tmp_path / "back.csv"
    back.write_text(exported, encoding="utf-8")
    code, out, _ = run(capsys, "judge", "import", "--corpus", "faq", str(back), "--json")
    assert json.loads(out) | {} == {"added": 0, "updated": 0, "unchanged": 3, "query": 0,
                                    "pair": 3, "repeated": 0, "answer": 0}
    bad = tmp_path / "bad.csv"
    bad.write_text("a_id,b_id,label\np1,p2,1\np1,nope,1\n", encoding="utf-8")
    code, _, err = run(capsys, "judge", "import", "--corpus", "faq", str(bad))
    assert code == 1 and "bad.csv: line 3: no document 'nope'" in err
    code, _, err = run(capsys, "judge", "export", "--corpus", "faq", "--out",
                       str(tmp_path / "missing" / "x.csv"))
    assert code == 1 and "does not exist" in err


def test_next_proposes_unjudged_items_as_json_for_a_script(cli_app, capsys):
    code, out, _ = run(capsys, "judge", "next", "--corpus", "faq", "--n", "4", "--kind", "pair",
                       "--json")
    batch = json.loads(out)["proposals"]
    assert code == 0 and 1 <= len(batch) <= 4
    assert set(batch[0]) >= {"kind", "query", "a", "b", "a_text", "b_text", "reason", "score"}
    first = batch[0]
    run(capsys, "judge", "add", "--corpus", "faq", "--a", first["a"], "--b", first["b"],
        "--label", "0")
    code, out, _ = run(capsys, "judge", "next", "--corpus", "faq", "--n", "4", "--kind", "pair",
                       "--json")
    assert (first["a"], first["b"]) not in {(p["a"], p["b"]) for p in json.loads(out)["proposals"]}
    code, out, _ = run(capsys, "judge", "next", "--corpus", "faq", "--n", "2")
    assert code == 0 and out.startswith("1. ")


def test_confirmed_groups_are_printed_and_written_with_their_canonical(cli_app, capsys, tmp_path):
    for a, b, label in (("p1", "p3", 1), ("p1", "p4", 1), ("p3", "p4", 1), ("p1", "p5", 1),
                        ("f1", "f2", 1), ("c1", "c2", 0)):
        run(capsys, "judge", "add", "--corpus", "faq", "--a", a, "--b", b, "--label", str(label))
    code, out, _ = run(capsys, "judge", "groups", "--corpus", "faq", "--json")
    assert [(g["canonical"], g["size"]) for g in json.loads(out)["groups"]] == \
        [("p1", 4), ("f1", 2)]
    target = tmp_path / "groups.csv"
    code, out, _ = run(capsys, "judge", "groups", "--corpus", "faq", "--out", str(target))
    rows = target.read_text(encoding="utf-8").splitlines()
    assert code == 0 and rows[0] == "group,canonical_id,id,is_canonical,text"
    assert rows[1].startswith("1,p1,p1,True,How do I reset my password?")
