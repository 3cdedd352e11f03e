"""One query's fast path (``searchapp.embedding.query_runtime``) gives the document path's
vectors, and the stages of a search are timed.

Every candidate the runtime kept (ONNX Runtime on 1 and 2 threads, torch) is compared with
the document path (``encode`` of a batch, the vectors the corpus is stored with) on
hypothesis' texts of 1 to 512 tokens: cosine >= 0.9999. The fast tokenizer gives the
encoder's ids; the ONNX graph is cached on disk by weights hash and made again when the
file is damaged; without onnxruntime the runtime falls back to torch and says why.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from searchapp.base.timing import StageTimes
from searchapp.embedding import onnx_graph
from searchapp.embedding.query_runtime import (
    EXPLORE,
    WINDOW,
    Candidate,
    PathChooser,
    QueryRuntime,
    rust_tokenizer,
)

WORDS = ["the", "protein", "folding", "of", "thermophilic", "bacteria", "under", "heat",
         "stress", "Zürich", "東京", "🙂", "3.14159", "ERR-40417", "naïve", "café", "a", "is",
         "reset", "password", "supercalifragilistic", "-", "(", ")", "don't"]
texts = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=420).map(" ".join),
    st.text(min_size=1, max_size=60).filter(lambda t: t.strip()),
)
EXACT = 0.9999


@pytest.fixture(scope="module")
def runtime(bundled_encoder) -> QueryRuntime:
    return bundled_encoder.query_runtime()


def test_the_fast_paths_are_there_on_a_cpu(runtime):
    names = {c.name for c in runtime.candidates}
    assert {"torch", "onnx-2", "onnx-2-spin"} <= names, runtime.reason
    recent = runtime.chooser.recent_ms()
    assert runtime.path in names and recent[runtime.path] == min(recent.values())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
def test_every_query_path_gives_the_document_paths_vector(bundled_encoder, runtime, text):
    enc = bundled_encoder
    cleaned = enc._clean([text])[0]
    if not cleaned:
        return
    tokens = len(enc._token_ids([text])[0]) - 2  # without [CLS] and [SEP]
    assert tokens >= 1
    document = enc.encode([text, "another text, so the batch path runs"])[0]
    for candidate in runtime.candidates:
        vector = candidate.encode(cleaned, StageTimes())
        cosine = float(vector @ document / np.linalg.norm(vector) / np.linalg.norm(document))
        assert cosine >= EXACT, (candidate.name, tokens, cosine)
    assert float(enc.encode_query(text) @ document) >= EXACT


def test_queries_past_the_max_length_are_truncated_alike(bundled_encoder, runtime):
    enc = bundled_encoder
    for words in (512,):
        text = " ".join(WORDS[i % 9] for i in range(words))
        assert len(enc.tokenizer(text)["input_ids"]) > enc.max_seq_length
        document = enc.encode([text, "x"])[0]
        for candidate in runtime.candidates:
            assert float(candidate.encode(text, StageTimes()) @ document) >= EXACT


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=300))
def test_the_fast_tokenizer_gives_the_encoders_ids(bundled_encoder, text):
    tokenizer = rust_tokenizer(bundled_encoder)
    cleaned = bundled_encoder._clean([text])[0]
    assert tokenizer.encode(cleaned).ids == bundled_encoder._token_ids([text])[0]


def test_a_repeated_query_comes_from_the_cache_and_cannot_be_changed(bundled_encoder, runtime):
    first, times = bundled_encoder.encode_query("a cached query"), StageTimes()
    again = bundled_encoder.encode_query("  a cached query ", times)
    assert again is first and "encode" not in times.ms() and "query-cache" in times.ms()
    with pytest.raises(ValueError):
        again[0] = 1.0
    # Not from the cache, and the same vector up to the path: the runtime may re-time
    # another path between two queries (EXPLORE), and the paths agree within EXACT
    # (float32 ONNX against bf16 torch on a CPU with avx512_bf16: cosine 0.99999).
    fresh = bundled_encoder.encode_query("a cached query", use_cache=False)
    assert fresh is not first and float(fresh @ first) >= EXACT


def test_the_first_query_goes_through_torch_and_the_second_builds_the_fast_path(tiny_bert):
    import time

    from searchapp.embedding.encoder import SiameseEncoder

    enc = SiameseEncoder.load(tiny_bert, device="cpu", precision="fp32")
    first = enc.encode_query("one query")
    assert enc._query_runtime is None  # a one-query process builds nothing
    again = enc.encode_query("another query")
    deadline = time.monotonic() + 120
    while enc._query_runtime is None:  # built on a thread of its own
        assert time.monotonic() < deadline, "the fast path was never built"
        time.sleep(0.05)
    assert enc._query_runtime.path.startswith(("onnx", "torch"))
    assert float(enc.encode_query("one query") @ first) >= EXACT
    assert float(enc.encode_query("another query", use_cache=False) @ again) >= EXACT


def test_a_process_that_exits_while_its_query_path_is_built_exits_cleanly(tiny_bert, tmp_path):
    """The build runs on a daemon thread; exiting in the middle of it (inside torch's or ONNX's
    C++ code) aborted the process with status 134 until the exit waited for it."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from searchapp.embedding.encoder import SiameseEncoder\n"
        f"enc = SiameseEncoder.load({str(tiny_bert)!r}, device='cpu', precision='fp32')\n"
        f"enc.query_graph_dir = __import__('pathlib').Path({str(tmp_path)!r})\n"
        "enc.encode_query('one query'); enc.encode_query('another query')\n"
        "sys.exit(0)  # at once: the build has just started\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(tmp_path.glob("*.onnx")), "the build finished before the process ended"


def test_training_drops_the_runtime_built_from_the_old_weights(tiny_bert):
    from searchapp.embedding.encoder import SiameseEncoder

    enc = SiameseEncoder.load(tiny_bert, device="cpu", precision="fp32")
    before = enc.query_runtime()
    enc.train()
    enc.eval()
    assert enc.query_runtime() is not before


def test_the_graph_is_cached_by_weights_hash_and_made_again_when_damaged(tiny_bert, tmp_path):
    from searchapp.embedding.encoder import SiameseEncoder

    enc = SiameseEncoder.load(tiny_bert, device="cpu", precision="fp32")
    key = onnx_graph.weights_hash(enc)
    graph = onnx_graph.OnnxQueryGraph.load_or_export(enc, tmp_path, 1, key)
    [saved] = tmp_path.glob("*.onnx")
    assert saved.name.startswith(key[:32])
    ids = enc._token_ids(["a short text"])[0]
    expected = enc._encode_on("cpu-fp32", ["a short text"], None)[0]
    assert float(graph.run(ids) @ expected) >= EXACT
    saved.write_bytes(b"not a graph")
    again = onnx_graph.OnnxQueryGraph.load_or_export(enc, tmp_path, 1, key)
    assert float(again.run(ids) @ expected) >= EXACT and saved.stat().st_size > 1000


def test_the_bundled_models_graph_has_every_attention_fused(bundled_encoder):
    """ONNX Runtime's fusions take on the bundled MiniLM: one Attention node per layer (and
    the graph is still exact: the test above checks every path)."""
    import io

    import onnx

    buffer = io.BytesIO()
    onnx_graph.export(bundled_encoder, buffer)
    ops = [n.op_type for n in onnx.load_from_string(buffer.getvalue()).graph.node]
    layers = bundled_encoder.transformer.config.num_hidden_layers
    assert ops.count("Attention") == layers and "EmbedLayerNormalization" in ops
    assert "Softmax" not in ops  # no attention left unfused


def test_without_onnxruntime_queries_go_through_torch_and_the_reason_says_so(
        tiny_bert, monkeypatch):
    from searchapp.embedding.encoder import SiameseEncoder

    enc = SiameseEncoder.load(tiny_bert, device="cpu", precision="fp32")
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails
    monkeypatch.setattr("searchapp.embedding.query_runtime._GRAPHS", {})
    runtime = QueryRuntime.build(enc, None, Candidate("torch", enc._torch_query))
    assert runtime.path == "torch" and "onnxruntime is not installed" in runtime.reason
    assert float(runtime.encode("hello there") @ enc.encode(["hello there", "x"])[0]) >= EXACT


def test_a_hybrid_search_times_each_stage(app, bundled_encoder):
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work
    from searchapp.search.service import search

    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    csv = app.settings.data_dir.parent / "faq.csv"
    csv.write_text("id,text\nt1,How do I reset my password?\nt2,Where is my invoice?\n")
    upload(app, read_table(csv), "faq")
    work(app, stop_when_idle=True)
    times = StageTimes()
    hits = search(app, "faq", "reset the password", k=2, mode="hybrid", times=times)
    assert hits[0].id == "t1"
    stages = times.ms()
    assert {"vector", "passages", "fulltext", "fusion", "rows", "snippets"} <= set(stages)
    assert {"encode", "query-cache"} & set(stages)
    assert times.server_timing().split(", ")[-1].startswith("total;dur=")


# ---- the rest of the path --------------------------------------------------------------
def _spans_word_by_word(text: str, words: list[str]) -> list[tuple[int, int]]:
    """word_spans as it was: every word of the text stemmed and looked up."""
    import re

    from searchapp.search.snippets import stem

    wanted = {stem(w) for w in words if w}
    return [m.span() for m in re.finditer(r"\w+", text) if stem(m.group()) in wanted]


@example(text=["UPDATED", "Updates"], glue="", words=["update"])  # a word inside a word
@example(text=["updated", "x"], glue="é", words=["update"])  # a letter beyond ASCII after
@example(text=["\u212aelvin"], glue=" ", words=["kelvin"])  # lower-cases to ASCII
@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.one_of(st.sampled_from([*WORDS, "Updates", "UPDATED", "Kelvin",
                                                      "ſtop", "İstanbul", "update_x",
                                                      "\u212aelvin", "updatedé", "éupdate",
                                                      "stop’s", "résumé", "sum—up", "ﬁle?"]),
                               st.text(max_size=8)), max_size=40),
       glue=st.sampled_from([" ", "", "—", "é", "?", "\n"]),
       words=st.lists(st.one_of(st.sampled_from(["update", "stop", "protein", "istanbul",
                                                 "kelvin", "a", "ERR", "sum", "file"]),
                                st.text(min_size=1, max_size=6)), min_size=1, max_size=4))
def test_marking_words_by_pattern_finds_what_stemming_every_word_finds(text, glue, words):
    """Both ways of marking (the text's bytes for ASCII words, its lower case otherwise)
    against the reference, on texts where words touch letters and marks beyond ASCII."""
    from searchapp.search.snippets import word_spans

    text = glue.join(text)
    assert word_spans(text, words) == _spans_word_by_word(text, words)


def _densest_by_walking(marks: list[tuple[int, int]], width: int) -> int:
    """The snippet's densest window as it was found before: one walk over the marks."""
    best, best_count, j = marks[0][0], 0, 0
    for i, (a, _) in enumerate(marks):
        while j < len(marks) and marks[j][1] <= a + width * 2 // 3:
            j += 1
        if j - i > best_count:
            best, best_count = a, j - i
    return best


@settings(max_examples=300, deadline=None)
@given(gaps=st.lists(st.tuples(st.integers(0, 400), st.integers(1, 250)), min_size=1,
                     max_size=60),
       width=st.integers(30, 600))
def test_the_densest_window_by_bisection_is_the_walks(gaps, width):
    from searchapp.search.snippets import _densest

    marks, at = [], 0
    for gap, length in gaps:  # sorted, not overlapping, as word_spans gives them
        marks.append((at + gap, at + gap + length))
        at += gap + length
    assert _densest(marks, width) == _densest_by_walking(marks, width)


def test_cached_passage_vectors_follow_a_document_embedded_again():
    from searchapp.vectors.passage_index import STRIDE, PassageIndex

    idx = PassageIndex(dim=2)
    idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.array([[1, 0], [0, 1]], np.float32))
    query = np.array([0.0, 1.0], np.float32)
    assert idx.best_passages(query, [7]) == {7: (1, 1.0)}  # now kept in the LRU
    idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.array([[0, 1], [1, 0]], np.float32))
    assert idx.best_passages(query, [7]) == {7: (0, 1.0)}
    idx.delete_documents([7])
    assert idx.best_passages(query, [7]) == {}


def test_kept_passage_spans_follow_a_document_embedded_again():
    """A hit's spans are read once, then kept; a document embedded again (or deleted) is
    read again, and spans that do not count the index's passages are not kept."""
    from searchapp.vectors.passage_index import STRIDE, PassageIndex

    idx, reads = PassageIndex(dim=2), []
    stored = {7: np.array([[0, 90], [80, 160]], np.int32)}

    def read(docs):
        reads.append(list(docs))
        return {d: stored[d] for d in docs if d in stored}

    idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.eye(2, dtype=np.float32))
    assert idx.spans_of([7], read)[7].tolist() == [[0, 90], [80, 160]]
    assert idx.spans_of([7], read)[7].tolist() == [[0, 90], [80, 160]]
    assert reads == [[7]]
    stored[7] = np.array([[0, 50], [40, 100], [90, 140]], np.int32)  # embedded again
    idx.add(np.array([7 * STRIDE + p for p in range(3)]), np.eye(3, 2, dtype=np.float32))
    assert len(idx.spans_of([7], read)[7]) == 3 and reads == [[7], [7]]
    stored[7] = np.array([[0, 140]], np.int32)  # the database moved on: not kept
    idx.delete_documents([7])
    assert idx.spans_of([7], read) == {}  # deleted: none kept, none read
    idx.add(np.array([7 * STRIDE, 7 * STRIDE + 1]), np.eye(2, dtype=np.float32))
    assert len(idx.spans_of([7], read)[7]) == 1
    assert len(idx.spans_of([7], read)[7]) == 1 and reads == [[7], [7], [7], [7]]


def _runtime_of(paths: dict[str, Callable[[str, StageTimes], np.ndarray]],
                rounds: dict[str, list[float]]) -> QueryRuntime:
    candidates = tuple(Candidate(name, encode) for name, encode in paths.items())
    best = min(candidates, key=lambda c: min(rounds[c.name]))
    return QueryRuntime(best, "test", {n: min(v) for n, v in rounds.items()}, "m",
                        candidates=candidates, rounds_ms=rounds)


def test_a_query_beside_another_takes_the_sleeping_pool():
    """While one query is inside the spinning pool, the next takes the sleeping one."""
    inside, release = threading.Event(), threading.Event()

    def spinning(text, times):
        inside.set()
        assert release.wait(30)
        return np.ones(2, dtype=np.float32)

    runtime = _runtime_of({"onnx-2-spin": spinning,
                           "onnx-2": lambda text, times: np.zeros(2, dtype=np.float32)},
                          {"onnx-2-spin": [1.0], "onnx-2": [4.0]})
    first = threading.Thread(target=runtime.encode, args=("lone query",))
    first.start()
    assert inside.wait(30)
    beside = runtime.encode("second query")
    release.set()
    first.join(30)
    assert beside.tolist() == [0.0, 0.0]  # the sleeping pool's vector
    assert runtime.encode("third query", use_cache=False).tolist() == [1.0, 1.0]  # alone again


def test_the_path_follows_the_load():
    """A lone query's path is the lowest median of recent times. Built under a load that made
    the spinning pool slow, the runtime finds it fast again by the queries it gives it (every
    EXPLORE-th), and leaves it when it gets slow again."""
    cost = {"onnx-2-spin": 0.0, "onnx-2": 0.004}

    def path(name):
        def encode(text, times):
            time.sleep(cost[name])  # the path's cost, not a wait for anything
            return np.zeros(2, dtype=np.float32)
        return encode

    runtime = _runtime_of({n: path(n) for n in cost},
                          {"onnx-2-spin": [50.0] * 7, "onnx-2": [4.0] * 7})
    assert runtime.path == "onnx-2"  # as timed at build, under the load
    for phase, cheap, slow_cost in (("quiet", "onnx-2-spin", 0.0), ("busy", "onnx-2", 0.03)):
        cost["onnx-2-spin"] = slow_cost
        for i in range(WINDOW * EXPLORE):
            runtime.encode(f"{phase} {i}", use_cache=False)
            if runtime.path == cheap:
                break
        assert runtime.path == cheap, (phase, runtime.chooser.recent_ms())


@settings(max_examples=50, deadline=None)
@given(times=st.lists(st.tuples(st.sampled_from("abc"), st.floats(0.1, 100.0)), max_size=60),
       explore=st.integers(2, 30))
def test_a_lone_query_takes_the_best_median_except_every_explore_th(times, explore):
    chooser = PathChooser({"a": [2.0], "b": [3.0], "c": [4.0]}, explore=explore)
    for name, ms in times:
        chooser.record(name, ms)
    for turn in range(1, 2 * explore + 1):
        best, picked = chooser.best(), chooser.pick(alone=True)
        assert (picked != best) == (turn % explore == 0), (turn, best, picked)


def test_the_two_thread_graph_spins_only_while_it_runs(runtime):
    """Its pool spins between operators (a lone query's p50 2.48 against 3.35 ms sleeping,
    onnx_graph), and stops when the last run returns, so it takes no core between queries."""
    from searchapp.embedding.query_runtime import _GRAPHS

    graphs = {g.spin: g for g in _GRAPHS.values()}
    for spin, spins in ((False, "0"), (True, "1")):
        options = graphs[spin].session.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == spins
        assert options.get_session_config_entry("session.force_spinning_stop") == "1"
