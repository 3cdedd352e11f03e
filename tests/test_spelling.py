"""Did you mean: a misspelt word of a query corrected to a frequent word of the corpus.

Properties (hypothesis): a word the corpus holds is never corrected, nor a word with a
digit, a code (``_``, ``-`` inside, an inner capital, all capitals), an excluded word or a
filter; the correction keeps everything else as typed. Then on a real corpus (files
ingested and embedded by the CLI, SQLite, the bundled encoder): the CLI's line, its
``--json`` and ``--as-typed``, the API's ``did_you_mean`` and ``as_typed``, a word the
stemmer finds left alone, and the lexicon kept per generation in the App's memo.
"""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from searchapp.cli.main import main
from searchapp.search import spelling
from searchapp.search.spelling import Lexicon, candidate_words, propose
from tests.helpers import ingest_files
from tests.test_api import stack  # noqa: F401 - the API behind the real door

VOCAB = [("postgres", 40), ("replication", 12), ("database", 30), ("server", 25),
         ("logging", 6), ("café", 4), ("rebase", 5), ("vacuum", 8)]
LEX = Lexicon.from_counts(VOCAB)

LETTERS = st.text(alphabet=string.ascii_lowercase + "éèïç", min_size=1, max_size=12)
COUNTS = st.lists(st.tuples(LETTERS, st.integers(1, 50)), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(counts=COUNTS, data=st.data())
def test_a_word_of_the_vocabulary_is_never_corrected(counts, data):
    # each word beside a far more frequent word one letter away: the tempting correction
    rivals = [(w[:-1] + ("q" if w[-1] != "q" else "z"), 1000) for w, _ in counts]
    lex = Lexicon.from_counts(counts + rivals)
    words = data.draw(st.lists(st.sampled_from([w for w, _ in counts]), min_size=1,
                               max_size=6))
    cased = [data.draw(st.sampled_from([w, w.upper(), w.capitalize()])) for w in words]
    assert propose(" ".join(cased), lex) is None


def near_misses(word: str) -> st.SearchStrategy[str]:
    """The word with one letter changed, dropped or doubled."""
    return st.integers(0, len(word) - 1).flatmap(lambda i: st.sampled_from([
        word[:i] + "x" + word[i + 1:], word[:i] + word[i + 1:], word[:i] + word[i] + word[i:]]))


CODES = st.sampled_from(["postgrse1", "2postgrse", "pg_dmup", "git-rebsae", "Postgr3s",
                         "PostgrSQL", "POSTGRSE", "iPostgrse", "--postgrse", "-postgrse",
                         "type:postgrse", "date>=postgrse", "http://postgrse", "C++",
                         "replicaton.conf", "serve'r", "vacum#", "12345", "3.14"])


@settings(max_examples=200, deadline=None)
@given(code=CODES, before=st.sampled_from(["", "postgres ", "server "]))
def test_codes_numbers_words_with_digits_exclusions_and_filters_stay_as_typed(code, before):
    assert propose(before + code, LEX) is None


@settings(max_examples=200, deadline=None)
@given(word=st.sampled_from([w for w, _ in VOCAB if len(w) >= 6]).flatmap(near_misses),
       digits=st.integers(0, 9), where=st.integers(0, 5))
def test_a_word_with_a_digit_is_never_corrected_wherever_the_digit_is(word, digits, where):
    assert propose(word[:where] + str(digits) + word[where:], LEX) is None


def test_the_misspelt_words_are_corrected_and_the_rest_kept_as_typed():
    fixed = propose('Postgrse  "replicaton setup" -loging type:pdf ERR-40417 vacum', LEX)
    assert fixed.query == 'Postgres  "replication setup" -loging type:pdf ERR-40417 vacuum'
    assert fixed.words == (("Postgrse", "Postgres"), ("replicaton", "replication"),
                           ("vacum", "vacuum"))
    assert fixed.as_json()["corrected_words"] == [["Postgrse", "Postgres"],
                                                  ["replicaton", "replication"],
                                                  ["vacum", "vacuum"]]
    assert propose("cafe caffe", LEX).words == (("caffe", "café"),)  # accents folded


def test_a_rare_or_ambiguous_near_word_is_no_confident_choice():
    assert propose("replicaton", Lexicon.from_counts([("replication", 1)])) is None
    tied = Lexicon.from_counts([("bolt", 10), ("boat", 9)])
    assert propose("bott", tied) is None  # two words one edit away, as frequent
    assert propose("bott", Lexicon.from_counts([("bolt", 30), ("boat", 9)])).query == "bolt"
    assert propose("postgres", LEX) is None and propose("serv", LEX) is None  # short: 1 edit


def test_a_word_the_index_finds_as_typed_stays():
    assert propose("databse", LEX, found_as_typed=lambda w: True) is None
    assert propose("databse", LEX).query == "database"


def test_candidates_are_the_plain_words_and_the_words_of_phrases_only():
    words = candidate_words('"exact phrase" -gone -"not this" OR folder:"my stuff" a-b pg_x Ok')
    assert [w for _, _, w in words] == ["exact", "phrase"]


# ---- a real corpus, through the CLI and the API --------------------------------------------
FILES = {f"note{i}.md": f"# Postgres note {i}\n\nThe postgres server keeps its database "
                        f"safe with streaming replication and {extra}.\n"
         for i, extra in enumerate(["logging", "vacuum runs", "nightly backups", "logging",
                                    "write-ahead logging"])}


@pytest.fixture
def corpus(tmp_path, capsys):
    ingest_files(tmp_path / "docs", FILES, "pg")
    capsys.readouterr()
    return "pg"


def cli(capsys, *args: str) -> str:
    assert main(["search", "--corpus", "pg", "--here", *args]) == 0
    return capsys.readouterr().out


def test_the_cli_searches_the_correction_says_so_and_searches_as_typed_when_asked(
        corpus, capsys):
    out = json.loads(cli(capsys, "--json", "-k", "3", "postgrse replicaton"))
    assert out["did_you_mean"] == {"query": "postgres replication",
                                   "original": "postgrse replicaton",
                                   "corrected_words": [["postgrse", "postgres"],
                                                       ["replicaton", "replication"]]}
    assert len(out["results"]) == 3 and all(h["lexical"]["score"] for h in out["results"])
    typed = json.loads(cli(capsys, "--json", "--as-typed", "--mode", "lexical",
                           "postgrse replicaton"))
    assert typed["did_you_mean"] is None and typed["results"] == []
    text = cli(capsys, "-k", "1", "postgrse")
    assert text.startswith("Showing results for: postgres; search instead for: postgrse "
                           "(--as-typed)\n")
    assert json.loads(cli(capsys, "--json", "postgres databases"))["did_you_mean"] is None


def test_the_api_answers_with_did_you_mean_and_takes_as_typed(corpus, stack):  # noqa: F811
    client, _door = stack[0]()
    body = {"query": "loging -vacum", "k": 2, "mode": "lexical"}
    found = client.post("/api/v1/corpora/pg/search", json=body).json()
    assert found["did_you_mean"] == {"query": "logging -vacum", "original": "loging -vacum",
                                     "corrected_words": [["loging", "logging"]]}
    assert found["results"]  # the corrected query was searched (the typed one finds nothing)
    typed = client.post("/api/v1/corpora/pg/search", json={**body, "as_typed": True}).json()
    assert typed["did_you_mean"] is None and typed["results"] == []


def test_the_lexicon_is_loaded_once_per_generation(corpus, app, tmp_path):
    first = spelling.lexicon(app, "pg")[1]
    assert spelling.lexicon(app, "pg")[1] is first and first.knows("POSTGRES")
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "x.md").write_text("Checkpoints checkpoints.", encoding="utf-8")
    assert main(["ingest", str(tmp_path / "more"), "--corpus", "pg", "--wait"]) == 0
    again = spelling.lexicon(app, "pg")[1]
    assert again is not first and again.knows("checkpoints")
