"""Thread-safe inference: one encoder shared by every browser session and the warm-up thread.

The Streamlit process keeps one ``App`` and one encoder per model for all
sessions. These tests hammer the real search path (real encoder, SQLite,
hnswlib) and the encoder's tokenizer from many threads at once and require
zero errors and exactly the single-threaded results. Synchronisation is by
``threading.Barrier``/``Event`` with deadlines, never by sleeping.

Why the tokenizer threads: a Hugging Face fast tokenizer re-configures
truncation and padding on its one Rust object at every call, so two calls that
want different settings (``encode``: unpadded ids; ``tokenize``, as training
uses it: padded tensors) undo each other between that step and the
tokenisation. Without ``SiameseEncoder.inference_lock`` this shows as
``ValueError: Unable to create tensor`` or padded ids averaged into a vector
(older ``tokenizers`` raise ``RuntimeError: Already borrowed``). A short GIL
switch interval makes those interleavings frequent enough that the tests go
red on every run without the lock.
"""

from __future__ import annotations

import functools
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from searchapp.context import App
from searchapp.embedding.encoder import SiameseEncoder
from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search

MODEL = "all-MiniLM-L6-v2"
THREADS = 8
ROUNDS = 25  # searches per thread
ENCODES = 10  # encode calls per thread
DEADLINE = 60.0  # seconds a wait may take before the test fails instead of hanging
FAQ = [
    "How do I reset my password?",
    "Where can I download my invoice?",
    "The printer jams on every second page.",
    "Can I change the delivery address after ordering?",
    "My account was locked after three failed logins.",
    "How long does a refund take to arrive?",
    "The mobile app crashes when I open the camera.",
    "Is there a student discount on the yearly plan?",
    "Which browsers are supported?",
    "How do I export my contacts to a spreadsheet?",
]
# texts of very different lengths: padded and unpadded tokenisations differ
RAGGED = ["A cat.", "A cat sits on the warm mat by the kitchen door for most of the day."]


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Switch threads every few microseconds (default 5 ms) so races show on every run."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(before)


@pytest.fixture
def faq_app(app: App, bundled_encoder: SiameseEncoder) -> App:
    """The test's App with the bundled encoder and a small corpus "faq", embedded and indexed."""
    app.install_encoder(MODEL, bundled_encoder)  # the session's loaded encoder, not a second load
    csv = "id,text\n" + "".join(f"q{i},{text}\n" for i, text in enumerate(FAQ))
    summary = table_upload.upload(app, read_table(csv.encode(), "faq.csv"), "faq")
    assert run_until_done(app, summary.job_id, poll_seconds=0.05).status == "succeeded"
    return app


def run_threads(workers: list[Callable[[], None]],
                loopers: list[Callable[[threading.Event], None]] = ()) -> list[str]:
    """Run workers (and loopers) in threads started behind a barrier; the errors raised.

    Each looper is called with an Event that is set once every worker has
    returned, and keeps calling until then, so the loopers overlap the workers
    from the first call to the last whatever the machine's speed. A thread
    still running after ``DEADLINE`` is reported as an error (a deadlock or a
    wait on something that should not be waited for) instead of hanging.
    """
    errors: list[str] = []
    barrier = threading.Barrier(len(workers) + len(loopers))
    done = threading.Event()
    remaining = [len(workers)]
    count_lock = threading.Lock()

    def run(call: Callable[[], None], finite: bool) -> None:
        try:
            barrier.wait(timeout=DEADLINE)
            call()
        except Exception as exc:  # every failure is collected and asserted on below
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            if finite:
                with count_lock:
                    remaining[0] -= 1
                    if remaining[0] == 0:
                        done.set()

    threads = [threading.Thread(target=run, args=(w, True), daemon=True) for w in workers]
    threads += [threading.Thread(target=run, args=(functools.partial(loop, done), False),
                                 daemon=True) for loop in loopers]
    for t in threads:
        t.start()
    deadline = time.monotonic() + DEADLINE  # one deadline for all, not one per thread
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))
    errors += [f"{t.name} still running after {DEADLINE:.0f} s" for t in threads if t.is_alive()]
    return errors


def tokenizer_user(encoder: SiameseEncoder) -> Callable[[threading.Event], None]:
    """A looper that tokenises as training does (padded tensors) and checks the shapes."""
    expected = {k: tuple(v.shape) for k, v in encoder.tokenize(RAGGED).items()}

    def loop(done: threading.Event) -> None:
        while not done.is_set():
            got = {k: tuple(v.shape) for k, v in encoder.tokenize(RAGGED).items()}
            assert got == expected, f"tokenize gave {got}, expected {expected}"
    return loop


def encode_user(encoder: SiameseEncoder, rounds: int) -> Callable[[], None]:
    """A worker that encodes ragged texts and checks each vector against one thread's."""
    expected = encoder.encode(RAGGED)

    def work() -> None:
        for _ in range(rounds):
            cosines = (encoder.encode(RAGGED) * expected).sum(axis=1)
            assert cosines.min() > 0.9999, f"vectors changed under concurrency: {cosines}"
    return work


def test_encode_and_tokenize_from_many_threads_give_one_threads_results(
        bundled_encoder: SiameseEncoder, fast_switching: None) -> None:
    """8 threads share one encoder: 4 ``encode``, 4 ``tokenize``; 0 errors, same vectors."""
    workers = [encode_user(bundled_encoder, ENCODES) for _ in range(THREADS // 2)]
    loopers = [tokenizer_user(bundled_encoder) for _ in range(THREADS // 2)]
    assert run_threads(workers, loopers) == []


def gate_loading(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make model loads announce themselves and wait for a go: (started, go) events.

    The real ``load_encoder`` still does the loading, after ``go``; so while the
    searches run, a second model is provably in the middle of loading (its
    per-model lock held).
    """
    import searchapp.context as context

    started, go = threading.Event(), threading.Event()
    real = context.load_encoder

    def gated(name, settings):
        started.set()
        assert go.wait(timeout=DEADLINE), "the test never let the model load"
        return real(name, settings)

    monkeypatch.setattr(context, "load_encoder", gated)
    return started, go


def test_searches_from_8_threads_while_a_second_model_loads(
        faq_app: App, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch,
        fast_switching: None) -> None:
    """8 threads × 25 searches, plus training-style tokenizer use, during a model load.

    Every search must find its own question first (score 1.0) with 0 errors,
    and none may wait for the model that is loading (they run while it is held
    mid-load). The second model then finishes loading and works.
    """
    shutil.copytree(tiny_bert, faq_app.settings.models_dir / "tiny")
    started, go = gate_loading(monkeypatch)
    loaded: list[SiameseEncoder] = []
    loader = threading.Thread(target=lambda: loaded.append(faq_app.encoder("tiny")), daemon=True)
    loader.start()
    assert started.wait(timeout=DEADLINE), "the second model never started loading"

    def searcher(i: int) -> Callable[[], None]:
        def work() -> None:
            for r in range(ROUNDS):
                q = (i + r) % len(FAQ)
                top = search(faq_app, "faq", FAQ[q], k=3)[0]
                assert (top.id, top.semantic_score) == (f"q{q}", pytest.approx(1.0, abs=1e-3)), top
        return work

    encoder = faq_app.encoder(MODEL)  # ready: must not wait for "tiny"
    workers = [searcher(i) for i in range(THREADS)] + [encode_user(encoder, ENCODES)]
    errors = run_threads(workers, [tokenizer_user(encoder) for _ in range(2)])
    assert loader.is_alive(), "the second model finished loading before the searches did"
    go.set()
    loader.join(timeout=DEADLINE)
    assert errors == []
    assert len(loaded) == 1 and loaded[0].encode(["a cat"]).shape == (1, 32)
    assert np.isfinite(loaded[0].encode(FAQ)).all()
