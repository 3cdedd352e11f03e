"""A corpus' index in shards (``searchapp.search.shards``), without Ray: each shard built from
the database alone (its own rows), kept current by catch-up, asked through the fan-out
client, and the merged answer equal to the single index's. Real SQLite, the bundled encoder,
hnswlib. The Ray-served path is tests/test_shards_ray.py (slow)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import text

from searchapp.corpora import documents
from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs.worker import run_until_done
from searchapp.search.coverage import missing_of
from searchapp.search.service import open_corpus, search
from searchapp.search.shards.fanout import LocalReplica, ShardSet
from searchapp.search.shards.shard import Shard, ShardSpec
from searchapp.store.db import Database
from searchapp.store.shard_rows import shard_of, shard_sql
from searchapp.vectors.handle import served_elsewhere

SAMPLE = "searchapp/sample/captions.csv.gz"
QUERIES = ["a dog runs on the beach", "two men playing football", "a plate of food",
           "children in a park", "someone riding a bike down a hill"]


@pytest.fixture
def corpus(app, tmp_path):
    """240 captions, and 30 longer texts (nine captions each) split into passages (over 256
    of them: enough to train a pq shard's passage codes)."""
    from tests.conftest import REPO

    app.settings = dataclasses.replace(app.settings, passage_tokens=16)
    table = pd.read_csv(REPO / SAMPLE, keep_default_na=False).drop_duplicates("text")
    short = table.head(240)[["id", "text"]]
    rest = table.iloc[240:510]["text"].tolist()
    long = pd.DataFrame({"id": [f"long-{i}" for i in range(30)],
                         "text": [" ".join(rest[i * 9:(i + 1) * 9]) for i in range(30)]})
    path = tmp_path / "corpus.csv"
    pd.concat([short, long]).to_csv(path, index=False)
    job = table_upload.upload(app, read_table(path), "caps").job_id
    assert run_until_done(app, job).status == "succeeded"
    return "caps"


def shard_set(app, name: str, shards: int, replicas: int = 1) -> tuple[ShardSet, list]:
    handle = open_corpus(app, name)
    built = []
    for number in range(shards):
        spec = ShardSpec(handle.corpus_id, handle.model.id, handle.model.dimension, number,
                         shards)
        group = []
        for r in range(replicas):
            shard = Shard(Database(app.settings.database_url), spec)
            shard.catch_up()
            group.append(LocalReplica(shard, f"{number}/{r}"))
        built.append(group)
    return ShardSet(built, [f"shard {n + 1} of {shards}" for n in range(shards)]), built


def sharded(app, name: str, client: ShardSet):
    return served_elsewhere(app, name, lambda corpus_id, model_id: client)


def test_sharded_search_ranks_as_the_single_index(app, corpus):
    """One shard: the single index's answer exactly. More: every hit scored exactly as the
    single index scores it, and nothing better lost (each shard offers its own n best, so
    the merge sees at least the candidates the single index sees)."""
    from searchapp.search.nearest import score_documents

    local = open_corpus(app, corpus)
    ids = local.index.labels().tolist()
    for shards in (1, 3, 4):
        client, built = shard_set(app, corpus, shards)
        handle = sharded(app, corpus, client)
        assert handle.index.count == 0 and handle.embedded == 270  # nothing loaded here
        assert sum(group[0].shard.passages.count for group in built) > 256  # split texts
        for query in QUERIES:
            vector = app.encoder(local.model.name).encode_query(query)
            exact = score_documents(local.index, local.passages, vector, ids, 0.5)
            for mode in ("semantic", "hybrid"):
                one = search(app, corpus, query, k=10, mode=mode)
                many = search(app, handle, query, k=10, mode=mode)
                assert missing_of(many) == ()
                assert all(abs(h.semantic_score - exact[h.doc_id].score) < 1e-5 and
                           h.passage == exact[h.doc_id].passage for h in many)
                if shards == 1:
                    assert [(h.id, h.score, h.passage) for h in many] == \
                           [(h.id, h.score, h.passage) for h in one], (query, mode)
                elif mode == "semantic":
                    assert all(a.score >= b.score - 1e-6 for a, b in zip(many, one,
                                                                          strict=True))


def test_each_shard_reads_only_its_own_documents_and_catches_up(app, corpus, tmp_path):
    client, built = shard_set(app, corpus, 4)
    before_passages = sum(g[0].shard.passages.count for g in built)
    with app.db.session() as s:
        ids = s.execute(text("SELECT id FROM documents")).scalars().all()
    for number, group in enumerate(built):
        held = group[0].shard.index.labels()
        assert held.tolist() == sorted(i for i in ids if shard_of([i], 4)[0] == number)
    generations = [g[0].shard.generation for g in built]
    documents.delete(app, corpus, ["long-3"])
    assert all(group[0].shard.catch_up() for group in built)
    assert all(g[0].shard.generation > before for g, before in zip(built, generations,
                                                                    strict=True))
    assert sum(g[0].shard.index.count for g in built) == 269
    assert sum(g[0].shard.passages.count for g in built) < before_passages
    # a document added falls in one shard: only that shard's index grows
    sizes = [g[0].shard.index.count for g in built]
    job = table_upload.upload(app, _table(tmp_path, [("new-1", "a red kite over the sea")]),
                              corpus).job_id
    assert run_until_done(app, job).status == "succeeded"
    for g in built:
        g[0].shard.catch_up()
    grown = [g[0].shard.index.count - size for g, size in zip(built, sizes, strict=True)]
    assert sorted(grown) == [0, 0, 0, 1]
    hits = search(app, sharded(app, corpus, client), "a kite flying above the ocean", k=1,
                  mode="semantic")
    assert hits[0].id == "new-1"


def _table(tmp_path, rows):
    path = tmp_path / "more.csv"
    pd.DataFrame(rows, columns=["id", "text"]).to_csv(path, index=False)
    return read_table(path)


def test_a_shard_with_no_live_replica_makes_the_answer_partial_and_names_it(app, corpus):
    client, built = shard_set(app, corpus, 3, replicas=2)
    handle = sharded(app, corpus, client)
    whole = search(app, handle, QUERIES[0], k=10)
    built[1][0].down = True  # one replica of shard 2 gone: its twin answers
    assert [h.id for h in search(app, handle, QUERIES[0], k=10)] == [h.id for h in whole]
    built[1][1].down = True  # both gone
    partial = search(app, handle, QUERIES[0], k=10)
    assert missing_of(partial) == ("shard 2 of 3",)
    held_by_2 = set(built[1][0].shard.index.labels().tolist())
    assert not held_by_2 & {h.doc_id for h in partial}
    built[1][0].down = False  # back: complete again
    again = search(app, handle, QUERIES[0], k=10)
    assert missing_of(again) == () and [h.id for h in again] == [h.id for h in whole]


def test_more_like_this_asks_the_shards_and_answers_as_the_single_index(app, corpus):
    """"More like this" on the shard servers: the document's stored vector asked of every
    shard, no local index loaded, the single index's answer; a shard down is named."""
    from searchapp.search.refine import more_like

    client, built = shard_set(app, corpus, 3)
    handle = sharded(app, corpus, client)
    short = search(app, corpus, QUERIES[0], k=1)[0].id
    for doc in (short, "long-3"):
        one = more_like(app, corpus, doc, k=8)
        many = more_like(app, handle, doc, k=8)
        assert [(h.id, round(h.score, 5)) for h in many] == \
               [(h.id, round(h.score, 5)) for h in one] and doc not in {h.id for h in many}
    assert handle.index.count == 0
    built[2][0].down = True
    partial = more_like(app, handle, short, k=8)
    assert missing_of(partial) == ("shard 3 of 3",)
    assert not set(built[2][0].shard.index.labels().tolist()) & {h.doc_id for h in partial}


def test_the_shards_full_text_ranks_as_the_single_index_and_follows_changes(app, corpus):
    """Each shard keeps its documents' words (an FTS5 file of its own): one shard ranks by
    words exactly as the app's SQLite index; three hold exactly their documents, agree with
    it on most of the top 10 (BM25 statistics are each shard's), forget a deleted document
    at the next catch-up, and a shard down is named."""
    for shards in (1, 3):
        client, built = shard_set(app, corpus, shards)
        handle = sharded(app, corpus, client)
        assert [g[0].shard.words.count for g in built] == \
               [g[0].shard.index.count for g in built]
        agree = 0
        for query in QUERIES:
            one = search(app, corpus, query, k=10, mode="lexical")
            many = search(app, handle, query, k=10, mode="lexical")
            if shards == 1:
                assert [(h.id, round(h.score, 6)) for h in many] == \
                       [(h.id, round(h.score, 6)) for h in one], query
                filtered = f"{query} -beach"  # a filter: the database checks the shards' top
                asked, ask = [], client.lexical
                client.lexical = lambda q, n, *more, ask=ask, asked=asked: \
                    asked.append(n) or ask(q, n, *more)
                assert [h.id for h in search(app, handle, filtered, k=10, mode="lexical")] \
                    == [h.id for h in search(app, corpus, filtered, k=10, mode="lexical")]
                assert asked == [40]  # 4 x 10 asked of the shards, those passing kept
                del client.lexical
            agree += len({h.id for h in one} & {h.id for h in many})
        # 90 captions a shard: their mean lengths differ, and captions tie often (41 of 50)
        assert agree >= 0.8 * 10 * len(QUERIES), agree
    query = "someone riding a bike down a hill"
    hit = search(app, handle, query, k=1, mode="lexical")[0].id
    documents.delete(app, corpus, [hit])
    for group in built:
        group[0].shard.catch_up()
    assert hit not in {h.id for h in search(app, handle, query, k=50, mode="lexical")}
    assert sum(g[0].shard.words.count for g in built) == 269
    built[1][0].down = True
    assert missing_of(search(app, handle, query, k=10, mode="lexical")) == ("shard 2 of 3",)
    built[1][0].down = False
    built[2][0].call = _fails_on("lexical", built[2][0].call)  # its full text alone fails:
    hybrid = search(app, handle, query, k=10, mode="hybrid")  # (asked on another thread)
    assert missing_of(hybrid) == ("shard 3 of 3",)


def test_a_shard_leaves_out_the_phrases_common_in_the_whole_corpus(tmp_path):
    """One of 4 shards of a 10,000-document corpus holds 2,500; a phrase in 600 of them is
    in about 2,400 of the corpus' (over its 2,000 cap), so the shard leaves it out of the
    query as one index would, though 600 is under the cap."""
    from searchapp.search.shards.shard_words import ShardWords

    words = ShardWords(1, tmp_path / "words")
    words.add([(i, "lorem common ipsum" if i < 600 else f"dolor sit {i}")
               for i in range(2_500)] + [(9_000, "a rare word"), (9_001, "rare and common")])
    alone = {d for d, _ in words.top("common rare", 100)}  # the whole corpus: common counts
    assert {9_000, 9_001} < alone and len(alone & set(range(600))) > 50
    assert {d for d, _ in words.top("common rare", 100, shards=4)} == {9_000, 9_001}
    # taken apart for the merge, the phrases weigh as in the query (the rare one twice)
    from searchapp.search.shards.shard_words import merged

    assert [(d, round(x, 9)) for d, x in merged([words.candidates("common rare", 10, 4)], 10)] \
        == [(d, round(x, 9)) for d, x in words.top("common rare", 10, shards=4)]


def test_shards_words_scored_by_the_whole_corpus_statistics_rank_as_one_index(tmp_path):
    """Documents of equal length in 3 shards (so only the word statistics differ between
    shards): the merged candidates carry exactly one index's BM25 scores; each shard's
    own statistics do not."""
    from searchapp.search.shards.shard_words import ShardWords, merged

    rng = np.random.default_rng(1)
    weights = 1 / np.arange(1, 301)
    docs = [(i + 1, " ".join(rng.choice([f"w{j}" for j in range(300)], size=12,
                                         p=weights / weights.sum()))) for i in range(3000)]
    whole = ShardWords(1, tmp_path / "whole")
    whole.add(docs)
    place = shard_of(np.array([d for d, _ in docs]), 3)
    parts = [ShardWords(1, tmp_path / f"part{k}") for k in range(3)]
    for k, words in enumerate(parts):
        words.add([d for d, at in zip(docs, place, strict=True) if at == k])
    own_differs = 0
    for a, b in rng.integers(0, 300, size=(40, 2)).tolist():
        query = f"w{a} w{b}"
        exact = dict(whole.top(query, 10_000))
        found = merged([w.candidates(query, 10, 3) for w in parts], 10)
        assert [round(score, 9) for _, score in found] == \
               [round(score, 9) for _, score in whole.top(query, 10)], query
        assert all(abs(exact[doc] - score) < 1e-9 for doc, score in found), query
        own = sorted((h for w in parts for h in w.top(query, 10, 3)), key=lambda h: -h[1])
        own_differs += any(abs(exact[doc] - score) > 1e-6 for doc, score in own[:10])
    assert own_differs > 30


def _fails_on(method: str, call):
    from searchapp.search.shards.fanout import ReplicaUnavailable

    def wrapped(name, args, timeout):
        if name == method:
            raise ReplicaUnavailable("its full text is gone")
        return call(name, args, timeout)

    return wrapped


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=st.lists(st.integers(min_value=1, max_value=3_400_000_000), min_size=1,
                    max_size=40), shards=st.integers(min_value=1, max_value=64),
       by=st.sampled_from(["hash", "range"]))
def test_the_sql_placement_is_the_numpy_placement(ids, shards, by):
    db = Database("sqlite://")
    with db.engine.connect() as conn:
        got = [conn.execute(text(f"SELECT {shard_sql(str(i), shards, by)}")).scalar()
               for i in ids]
    assert got == shard_of(ids, shards, by).tolist()
    assert all(0 <= g < shards for g in got)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**16), shards=st.integers(1, 6), n=st.integers(1, 30))
def test_merging_the_shards_top_n_gives_the_top_n_of_all(seed, shards, n):
    from searchapp.search.nearest import nearest_documents
    from searchapp.vectors.index import VectorIndex

    rng = np.random.default_rng(seed)
    ids = np.arange(1, 201, dtype=np.int64)
    vectors = rng.normal(size=(200, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    whole, parts = VectorIndex(16), [VectorIndex(16) for _ in range(shards)]
    whole.add(ids, vectors)
    place = shard_of(ids, shards)
    for s in range(shards):
        parts[s].add(ids[place == s], vectors[place == s])

    class Part:
        def __init__(self, index, name):
            self.index, self.name = index, name

        def call(self, method, args, timeout):
            if method == "count":
                return self.index.count
            vector, k, weight = args
            return nearest_documents(self.index, None, vector, k, weight=weight)

    client = ShardSet([[Part(p, str(i))] for i, p in enumerate(parts)],
                      [str(i) for i in range(shards)])
    query = rng.normal(size=16).astype(np.float32)
    expected = nearest_documents(whole, None, query, n)
    assert [c.doc for c in client.nearest(query, n, 0.0)] == [c.doc for c in expected]


def test_compressed_shards_find_nearly_what_the_single_index_finds(app, corpus, monkeypatch):
    """Trained on the shard's first vectors (here 64: the corpus is small), the compressed
    indexes find most of the single index's top 10; pq scores its hits on stored vectors,
    so every score it shows is the exact one."""
    from searchapp.search.shards import compressed_store
    from searchapp.search.shards.compressed import CompressedParams, make_index

    monkeypatch.setattr(compressed_store, "make_index", lambda kind, dim, rerank=None:
                        make_index(kind, dim, rerank, CompressedParams(train_at=64)))
    from searchapp.search.nearest import score_documents

    handle = open_corpus(app, corpus)
    ids = handle.index.labels().tolist()
    for compression, shards in (("sq8", 2), ("pq", 1)):
        replicas = []
        for number in range(shards):
            shard = Shard(Database(app.settings.database_url), ShardSpec(
                handle.corpus_id, handle.model.id, handle.model.dimension, number, shards,
                compression))
            shard.catch_up()
            assert shard.index._store.trained  # codes, not the float32 vectors held before
            assert shard.passages._store.trained or compression == "sq8"
            replicas.append([LocalReplica(shard, str(number))])
        client = ShardSet(replicas, [f"shard {n + 1} of {shards}" for n in range(shards)])
        found = 0
        for query in QUERIES:
            one = {h.id: h.semantic_score for h in search(app, corpus, query, k=10,
                                                          mode="semantic")}
            many = search(app, sharded(app, corpus, client), query, k=10, mode="semantic")
            found += len(one.keys() & {h.id for h in many})
            if compression == "pq":  # exact scores: the stored vectors, not the codes
                assert all(abs(h.semantic_score - one[h.id]) < 1e-5
                           for h in many if h.id in one)
                vector = app.encoder(handle.model.name).encode_query(query)
                exact = score_documents(handle.index, handle.passages, vector, ids, 0.5)
                scored = client.score(vector, ids, 0.5)  # hits found by words, filters
                assert scored.keys() == exact.keys()
                assert all(abs(scored[d].score - exact[d].score) < 1e-5 and
                           scored[d].passage == exact[d].passage for d in ids), query
        assert found >= 0.8 * 10 * len(QUERIES), compression


def test_a_compressed_shard_that_outgrows_its_training_is_trained_again(app, monkeypatch):
    """A build trains the codes on all the shard's rows (up to TRAIN_MAX), not on the first
    chunk it reads; codes trained on 100 vectors have few lists, so once the shard holds 8
    times that, it rebuilds its index from the database, trained on all it holds."""
    from searchapp.search.shards import compressed_store
    from searchapp.search.shards.compressed import CompressedParams, make_index
    from searchapp.store import repo, shard_rows

    monkeypatch.setattr(compressed_store, "make_index", lambda kind, dim, rerank=None:
                        make_index(kind, dim, rerank, CompressedParams(train_at=64)))
    rng = np.random.default_rng(0)
    model = app.model_ref(app.settings.model)

    def add(first: int, n: int) -> None:
        with app.db.session() as s:
            corpus = repo.get_or_create_corpus(s, "grow", model.name)
            repo.add_documents(s, corpus, [repo.NewDocument(f"d{i}", f"text {i}")
                                           for i in range(first, first + n)])
        with app.db.session() as s:
            state = repo.corpus_state(s, "grow")
            ids = sorted(repo.external_ids(s, state.id))[first:first + n]
            vectors = rng.standard_normal((n, model.dimension)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            repo.save_embeddings(s, state.id, model.id, ids, vectors)

    add(0, 100)
    with app.db.session() as s:
        state = repo.corpus_state(s, "grow")
    monkeypatch.setattr(shard_rows, "READ_CHUNK", 30)  # the build reads 30 rows at a time
    shard = Shard(Database(app.settings.database_url),
                  ShardSpec(state.id, model.id, model.dimension, 0, 1, "sq8"))
    shard.catch_up()
    assert shard.index._store.trained_on == 100 and shard.retrained == 0
    add(100, 700)
    shard.catch_up()
    assert shard.retrained == 1 and shard.index._store.trained_on == 800
    assert shard.index.count == 800 and not shard.index.outgrown
