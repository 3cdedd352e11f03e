"""Search modes on the real encoder, SQLite FTS5 and hnswlib: passages, hybrid, filters."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select, text, update

from searchapp.corpora import service as corpora
from searchapp.errors import InvalidParameterError, JobError
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search import service as search_module
from searchapp.search.service import search
from searchapp.store import repo
from tests.helpers import run_cli

AGENDA = " ".join(f"The committee reviewed item number {i} of the quarterly budget agenda "
                  "and moved on to the next point." for i in range(30))
PENGUINS = "Finally, the penguins at the city zoo were fed fresh herring by their keeper."
SHORT = [
    ("dog", "A dog runs along the beach chasing a ball.", "misc", "2022", "2022-01-15"),
    ("cat", "A cat sleeps on the windowsill in the afternoon sun.", "misc", "2023", "2023-03-02"),
    ("birds", "Seagulls steal chips from tourists at the harbour.", "misc", "2024", "2024-06-30"),
    ("reset", "How do I reset my password?", "billing", "2023", "2023-05-01"),
    ("invoice", "The invoice total is wrong after the upgrade.", "billing", "2024", "2024-02-10"),
    ("refund", "When will my refund arrive?", "billing", "2025", "2025-01-20"),
]
CODES = ["40417", "40471", "41407", "40147", "47041", "40714", "44017", "40407"]


@pytest.fixture
def app(app, bundled_encoder):
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)  # the session's encoder: no reload
    return app


def ingest(app, name: str, rows: list[dict]) -> dict:
    csv = pd.DataFrame(rows).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, f"{name}.csv"), name)
    job = run_until_done(app, summary.job_id)
    assert job.status == "succeeded", job.error
    return job.result


def mixed_rows() -> list[dict]:
    rows = [{"id": i, "text": t, "product": p, "year": y, "shipped": d}
            for i, t, p, y, d in SHORT]
    rows.append({"id": "minutes", "text": f"{AGENDA} {PENGUINS}", "product": "misc",
                 "year": "2024", "shipped": "2024-07-07"})
    return rows


def test_a_long_document_is_found_by_the_sentence_at_its_end(app):
    result = ingest(app, "docs", mixed_rows())
    assert result["split"] == 1 and result["passages"] >= 2
    hits = search(app, "docs", "penguins at the zoo are fed herring", k=3, mode="semantic")
    top = hits[0]
    assert top.id == "minutes" and top.score > 0.3
    assert top.passage == result["passages"] - 1  # the last passage matched
    start, end = top.span
    assert PENGUINS in top.text[start:end] and start > len(AGENDA) // 2
    assert "«penguins»" in top.marked_snippet
    assert "committee reviewed item number 0 " not in top.snippet


def make_pre_passage(app, corpus: str, external_id: str) -> int:
    """Store a document as schema 2 left it: one vector of its first window, no passages."""
    from searchapp.context import App
    from searchapp.store.schema import Document, Embedding

    with app.db.session() as s:
        doc_id, text_ = s.execute(select(Document.id, Document.text).where(
            Document.external_id == external_id)).one()
        vector = app.encoder("all-MiniLM-L6-v2").encode([text_])[0]  # truncated at 256 tokens
        s.execute(update(Embedding).where(Embedding.document_id == doc_id).values(
            vector=vector.astype("float32").tobytes(), passages=None, passage_spans=None))
        corpus_id = s.execute(select(Document.corpus_id).where(Document.id == doc_id)).scalar()
    App().drop_indexes(corpus_id)  # the index files are rebuilt from what is stored
    app.drop_indexes(corpus_id)
    return doc_id


def test_split_long_embeds_old_long_documents_in_passages_and_nothing_else(app):
    ingest(app, "docs", mixed_rows())
    old_id = make_pre_passage(app, "docs", "minutes")
    query = "penguins at the zoo are fed herring"
    assert search(app, "docs", query, k=1, mode="semantic")[0].passage is None  # as before
    with app.db.session() as s:
        short_ids = dict(s.execute(text("SELECT external_id, id FROM documents "
                                        "WHERE external_id != 'minutes'")).all())
    renewed, job = corpora.split_long(app, "docs")
    assert renewed == 1
    assert search(app, "docs", "penguins herring", k=1, mode="lexical")[0].id == "minutes"
    assert run_until_done(app, job).result["split"] == 1
    top = search(app, "docs", query, k=1, mode="semantic")[0]
    assert top.id == "minutes" and top.doc_id != old_id and top.passage is not None
    assert PENGUINS in top.text[top.span[0]:top.span[1]]
    with app.db.session() as s:  # the short documents kept their ids (and vectors)
        assert dict(s.execute(text("SELECT external_id, id FROM documents "
                                   "WHERE external_id != 'minutes'")).all()) == short_ids
        assert s.execute(text("SELECT count(*) FROM documents")).scalar() == 7
    assert corpora.split_long(app, "docs") == (0, None)  # nothing left to split


def test_split_long_waits_for_the_corpus_jobs(app):
    ingest(app, "docs", mixed_rows())
    make_pre_passage(app, "docs", "minutes")
    corpora.request_embed(app, "docs", new_rows=True)  # a queued job on the corpus
    with pytest.raises(JobError, match="in use by job"):
        corpora.split_long(app, "docs")


def code_rows() -> list[dict]:
    rows = [{"id": f"fw{c}", "text": f"The XR-7 firmware update stopped with error ERR-{c} "
             "and the device restarted."} for c in CODES]
    rows += [{"id": "other", "text": "Firmware errors after an update: what the error codes mean."}]
    return rows


@pytest.mark.parametrize("code", ["40407", "40417"])  # meaning alone ranks 40407 third
def test_an_exact_code_is_found_first_in_hybrid_mode(app, code):
    ingest(app, "fw", code_rows())
    hybrid = search(app, "fw", f"ERR-{code}", k=3, mode="hybrid")
    assert hybrid[0].id == f"fw{code}"
    assert hybrid[0].semantic_score is not None and hybrid[0].lexical_score is not None
    assert "«ERR»-«" + code + "»" in hybrid[0].marked_snippet


def test_filters_compare_numbers_strings_and_dates(app):
    ingest(app, "docs", mixed_rows())

    def ids(*where, mode="hybrid", query="something happened") -> set[str]:
        return {h.id for h in search(app, "docs", query, k=10, mode=mode, where=list(where))}

    assert ids("product=billing") == {"reset", "invoice", "refund"}
    assert ids("product!=billing") == {"dog", "cat", "birds", "minutes"}
    assert ids("year>=2024") == {"birds", "invoice", "refund", "minutes"}
    assert ids("year<2023.5") == {"dog", "cat", "reset"}
    assert ids("year>=2024", "product=billing") == {"invoice", "refund"}
    assert ids("shipped<2024-03-01") == {"dog", "cat", "reset", "invoice"}
    assert ids("shipped>=2024-06-30") == {"birds", "refund", "minutes"}
    assert ids("year=2024", mode="semantic") == {"birds", "invoice", "minutes"}
    assert ids("product=billing", mode="lexical", query="refund password invoice") == \
        {"reset", "invoice", "refund"}
    with pytest.raises(InvalidParameterError, match=r"no metadata column 'colour'.*product"):
        search(app, "docs", "x", where=["colour=red"])
    with pytest.raises(InvalidParameterError, match="compares numbers or dates"):
        search(app, "docs", "x", where=["product>billing"])
    with pytest.raises(InvalidParameterError, match="COLUMN OP VALUE"):
        search(app, "docs", "x", where=["product~billing"])


def test_a_selective_filter_still_returns_k_results(app, monkeypatch):
    rows = [{"id": f"n{i}", "text": f"Note {i} about the weekly team meeting and its plans.",
             "team": "alpha" if i % 40 == 0 else "beta"} for i in range(400)]
    ingest(app, "notes", rows)
    monkeypatch.setattr(search_module, "WIDEN_MAX", 16)  # reach the exact fallback soon
    hits = search(app, "notes", "a dog on the beach", k=10, mode="semantic",
                  where=["team=alpha"])
    assert sorted(h.id for h in hits) == sorted(f"n{i}" for i in range(0, 400, 40))
    assert [h.semantic_score for h in hits] == sorted((h.semantic_score for h in hits),
                                                      reverse=True)


def test_common_words_rank_what_rare_words_find(app, monkeypatch):
    from searchapp.store import fulltext

    rows = [{"id": f"d{i}", "text": f"The dog number {i} sleeps in its basket."}
            for i in range(10)]
    rows += [{"id": f"n{i}", "text": f"Meeting note {i} about the weekly plan."}
             for i in range(87)]
    rows += [{"id": "both", "text": "A dog running on the beach today."},
             {"id": "short", "text": "A cat on the beach."},
             {"id": "far", "text": "Gulls over the beach at the harbour in the evening."}]
    ingest(app, "pets", rows)
    # "dog" (11 of 100 documents) is common, "beach" (3) is not
    monkeypatch.setattr(fulltext, "COMMON_MIN_DOCS", 5)
    hits = search(app, "pets", "dog beach", k=10, mode="lexical")
    # found by "beach" only (the 30 dog-only documents are no candidates), ranked by both
    # words: without "dog", the shorter "short" would come first
    assert [h.id for h in hits] == ["both", "short", "far"]


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(picked=st.lists(st.integers(1, 12), min_size=2, max_size=5, unique=True),
       cap=st.integers(1, 11))
def test_informative_phrases_by_capped_counts_are_those_by_full_counts(store_of_words,
                                                                       picked, cap):
    """Counting each phrase's documents only up to the cap decides common and informative
    as counting them all does, and keeps the rarest when every phrase is common."""
    from searchapp.store import fulltext

    conn, corpus_id = store_of_words
    chunks = [f'"w{k}"' for k in picked]  # word w{k} is in k of the documents
    rarest = f'"w{min(picked)}"'
    expected = [c for c, k in zip(chunks, picked, strict=True) if k <= cap] or [rarest]
    fulltext.COMMON_MIN_DOCS, before = cap, fulltext.COMMON_MIN_DOCS
    try:
        assert fulltext.informative_chunks(conn, corpus_id, chunks, 12) == expected
    finally:
        fulltext.COMMON_MIN_DOCS = before


@pytest.fixture
def store_of_words(app):
    """A corpus where word ``w{k}`` is in k documents (k = 1..12); (connection, its id)."""
    ingest(app, "words", [{"id": f"d{i}", "text": " ".join(
        f"w{k}" for k in range(1, 13) if i < k) + f" filler {i}"} for i in range(12)])
    with app.db.session() as s:
        corpus_id = repo.corpus_state(s, "words").id
    with app.db.reader() as conn:
        yield conn, corpus_id


def fts_name(app, corpus: str) -> str:
    from searchapp.store.fulltext import fts_table

    with app.db.session() as s:
        return fts_table(repo.corpus_state(s, corpus).id)


def fts_matches(app, corpus: str, word: str) -> int:
    """Rows of the corpus' full-text table itself (no join with documents) holding ``word``."""
    fts = fts_name(app, corpus)
    with app.db.reader() as conn:
        return conn.execute(text(f"SELECT count(*) FROM {fts} WHERE {fts} MATCH :w"),
                            {"w": word}).scalar()


def test_replaced_and_deleted_documents_are_never_found_by_any_mode(app):
    ingest(app, "docs", [{"id": "a", "text": "The zebra crossing near the school is unsafe."},
                         {"id": "b", "text": "Parking permits are renewed every spring."}])
    ingest(app, "docs", [{"id": "a", "text": "The library opens late on Thursdays."},
                         {"id": "b", "text": "Parking permits are renewed every spring."}])
    for mode in ("semantic", "lexical", "hybrid"):
        hits = search(app, "docs", "zebra crossing school", k=5, mode=mode)
        assert all("zebra" not in h.text for h in hits), mode
    assert [h.id for h in search(app, "docs", "library Thursdays", k=1, mode="lexical")] == ["a"]
    assert fts_matches(app, "docs", "zebra") == 0 and fts_matches(app, "docs", "library") == 1
    fts = fts_name(app, "docs")
    with app.db.session() as s:  # the full-text index agrees with the stored documents
        s.execute(text(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)"))

    run_cli("corpora", "delete", "docs")
    ingest(app, "again", [{"id": "x", "text": "Parking permits are renewed every spring."}])
    assert fts_matches(app, "again", "parking") == 1
    with app.db.reader() as conn:  # the deleted corpus' table and triggers went with it
        assert conn.execute(text("SELECT count(*) FROM sqlite_master WHERE name LIKE :n"),
                            {"n": fts + "%"}).scalar() == 0
    for mode in ("semantic", "lexical", "hybrid"):
        assert [h.id for h in search(app, "again", "parking permits", k=5, mode=mode)] == ["x"]


def test_cli_modes_json_and_errors(app, tmp_path):
    ingest(app, "fw", code_rows())
    out = run_cli("search", "--corpus", "fw", "ERR-40417", "-k", "2", "--json").stdout
    data = json.loads(out)
    assert data["mode"] == "hybrid"
    first = data["results"][0]
    assert first["id"] == "fw40417" and first["lexical"]["rank"] == 1
    assert set(first["semantic"]) == {"rank", "score"} and "«40417»" in first["snippet"]
    lexical = json.loads(run_cli("search", "--corpus", "fw", "ERR-40417", "--mode", "lexical",
                                 "--json").stdout)
    assert [r["id"] for r in lexical["results"]] == ["fw40417"]
    assert lexical["results"][0]["semantic"] == {"rank": None, "score": None}
    bad = run_cli("search", "--corpus", "fw", "x", "--mode", "fuzzy", check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("error: Unknown search mode 'fuzzy'")
    bad = run_cli("search", "--corpus", "fw", "x", "--where", "year>=2024", check=False)
    assert bad.returncode == 1 and "has no metadata column 'year'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_cli_embed_split_long(app):
    ingest(app, "docs", mixed_rows())
    make_pre_passage(app, "docs", "minutes")
    ray = run_cli("embed", "--corpus", "docs", "--split-long", "--engine", "ray", check=False)
    assert ray.returncode == 1 and "leave out --engine ray" in ray.stderr
    out = run_cli("embed", "--corpus", "docs", "--split-long", "--wait").stdout
    assert "1 long document embedded before passages existed" in out
    assert "1 document was longer than a passage and was split into" in out
    again = run_cli("embed", "--corpus", "docs", "--split-long").stdout
    assert "No document of 'docs' needs splitting" in again


def test_a_mode_added_by_its_record_alone_is_searchable(app, monkeypatch):
    """A new mode is one record in ``search/modes.py``: ``search`` asks the record which lists
    to gather and how to order them, and never tests a mode's name."""
    from searchapp.search import modes

    def meaning_reversed(candidates, semantic, lexical, weights, rrf_k):
        return [candidates[c.doc] for c in reversed(semantic)]

    toy = modes.Mode("reversed", "Meaning, worst first", "Score: cosine.", semantic=True,
                     lexical=False, order=meaning_reversed)
    ingest(app, "short", [{"id": i, "text": t} for i, t, *_ in SHORT])
    assert_refused = pytest.raises(InvalidParameterError, match="Unknown search mode 'reversed'")
    with assert_refused:
        search(app, "short", "a dog on the beach", k=6, mode="reversed")
    monkeypatch.setitem(modes.MODES, "reversed", toy)
    forward = [h.id for h in search(app, "short", "a dog on the beach", k=6, mode="semantic")]
    backward = [h.id for h in search(app, "short", "a dog on the beach", k=6, mode="reversed")]
    assert backward == forward[::-1] and forward[0] == "dog"
