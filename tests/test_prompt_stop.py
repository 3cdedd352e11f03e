"""A cancel or a SIGTERM lands within seconds, whatever the embed batch holds (issue 33, class 6).

A real worker process embeds a corpus of long texts with the ``tiny`` model in one
batch that takes many seconds (the payload's ``batch_chars`` makes it one batch:
"at any batch size"). The test waits for the job's "embedding" report, then cancels
it or sends SIGTERM, and measures how long the worker takes to answer: the encoder
checks ``TaskContext.checkpoint`` between its sub-batches, so it is about a second;
without that check the whole batch is encoded first (over ten seconds here). The
half-encoded batch is never committed, and a later run embeds the whole corpus.

Also: a batch is bounded by its characters, not only by its documents.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from searchapp.context import App
from searchapp.corpora import documents as docs
from searchapp.corpora import embed_job
from searchapp.corpora.service import create_corpus, request_embed
from searchapp.embedding import passages, speed
from searchapp.embedding.encoder import SiameseEncoder
from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.store import repo
from searchapp.store.schema import EmbeddedCount, Embedding
from searchapp.vectors.handle import open_corpus

DOCS = 12
LENGTH = 200_000  # characters per document: ~1 s each for the tiny model on one core
ONE_BATCH = 10**9  # batch_chars: every document in one batch (about 13 s of encoding)
ANSWER_WITHIN = 5.0  # seconds from the cancel or SIGTERM to the worker's answer
START_DEADLINE = 120.0  # for the worker to load and report (a busy machine)
FINISH_DEADLINE = 300.0

SENTENCES = ("The harbour opened at dawn. ", "Ships came in from the north! ",
             "Nobody knew the captain's name. ", "Rain fell on the quiet town.\n")


def long_text(i: int) -> str:
    """A ``LENGTH``-character text of sentences, different per ``i``."""
    body = "".join(SENTENCES[(i + k) % len(SENTENCES)] for k in range(LENGTH // 25))
    return f"Document {i}. {body}"[:LENGTH]


def worker_env(data_dir: Path) -> dict[str, str]:
    return {**os.environ, "SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu",
            "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}


@pytest.fixture
def long_job(app: App, tiny_bert: Path) -> int:
    """The corpus ``long`` (DOCS long texts, model ``tiny``) and its embed job: one batch."""
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    create_corpus(app, "long", model="tiny")
    summary = docs.upsert(app, "long", [docs.Doc(f"d{i}", long_text(i)) for i in range(DOCS)])
    queue.cancel(app.db, summary.job_id)  # queued, not started: this job replaces it
    return queue.enqueue(app.db, "embed", {"corpus": "long", "batch_chars": ONE_BATCH})


def start_worker(app: App, tmp_path: Path, *args: str) -> subprocess.Popen:
    log = open(tmp_path / "worker.log", "ab")  # noqa: SIM115 - the child keeps it
    with log:
        return subprocess.Popen([sys.executable, "-m", "searchapp", "worker", *args],
                                stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                                env=worker_env(app.settings.data_dir))


def wait_until_embedding(app: App, job_id: int, worker: subprocess.Popen) -> None:
    """Until the job reports that it embeds (the batch is being encoded from then on)."""
    deadline = time.monotonic() + START_DEADLINE
    while "embedding" not in (queue.get(app.db, job_id).message or ""):
        assert worker.poll() is None, "the worker exited before embedding"
        assert time.monotonic() < deadline, "the job never started embedding"
        time.sleep(0.05)


def wait_for_status(app: App, job_id: int, statuses: tuple[str, ...], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while (status := queue.get(app.db, job_id).status) not in statuses:
        if time.monotonic() > deadline:
            return status
        time.sleep(0.05)
    return status


def stored(app: App) -> tuple[int, int, int, int]:
    """(embedding rows, distinct documents among them, the embedded counter, documents)."""
    with app.db.session() as s:
        corpus, model = repo.get_corpus(s, "long"), repo.find_model(s, "tiny")
        rows, distinct = s.execute(select(
            func.count(), func.count(Embedding.document_id.distinct())).where(
            Embedding.corpus_id == corpus.id, Embedding.model_id == model.id)).one()
        counter = s.scalar(select(EmbeddedCount.count).where(
            EmbeddedCount.corpus_id == corpus.id, EmbeddedCount.model_id == model.id))
        return rows, distinct, int(counter or 0), repo.count_documents(s, corpus.id)


def assert_all_embedded(app: App) -> None:
    assert stored(app) == (DOCS, DOCS, DOCS, DOCS)
    assert open_corpus(app, "long").index.count == DOCS


def stop(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def test_a_cancel_lands_within_seconds_inside_a_long_batch(app, long_job, tmp_path):
    worker = start_worker(app, tmp_path)
    try:
        wait_until_embedding(app, long_job, worker)
        asked = time.monotonic()
        queue.cancel(app.db, long_job)
        status = wait_for_status(app, long_job, queue.FINISHED, ANSWER_WITHIN)
        waited = time.monotonic() - asked
        assert status == "cancelled", f"still {status} {waited:.1f} s after the cancel"
        assert stored(app) == (0, 0, 0, DOCS), "the half-encoded batch is not committed"
        again = request_embed(app, "long")  # the same worker finishes the corpus
        assert wait_for_status(app, again, queue.FINISHED, FINISH_DEADLINE) == "succeeded"
    finally:
        stop(worker)
    assert_all_embedded(app)


def test_a_sigterm_lands_within_seconds_and_the_job_resumes(app, long_job, tmp_path):
    worker = start_worker(app, tmp_path)
    try:
        wait_until_embedding(app, long_job, worker)
        asked = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(ANSWER_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the worker still ran {ANSWER_WITHIN} s after SIGTERM")
        assert worker.returncode == 0, (tmp_path / "worker.log").read_text()[-2000:]
        assert time.monotonic() - asked < ANSWER_WITHIN
    finally:
        stop(worker)
    job = queue.get(app.db, long_job)
    assert job.status == "queued" and "resumes" in (job.message or "")
    assert stored(app) == (0, 0, 0, DOCS), "the half-encoded batch is not committed"
    later = start_worker(app, tmp_path, "--once")
    try:
        later.wait(FINISH_DEADLINE)
    finally:
        stop(later)
    assert queue.get(app.db, long_job).status == "succeeded"
    assert_all_embedded(app)


def test_an_embed_batch_is_bounded_by_its_characters(app, tiny_bert, monkeypatch):
    """Documents of 10,000 characters with ``batch_chars`` 25,000: batches of two (and the
    last of one), never the 128 documents of a first batch counted by documents alone."""
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    create_corpus(app, "long", model="tiny")
    texts = [long_text(i)[:10_000] for i in range(5)]
    summary = docs.upsert(app, "long", [docs.Doc(f"d{i}", t) for i, t in enumerate(texts)])
    queue.cancel(app.db, summary.job_id)
    queue.enqueue(app.db, "embed", {"corpus": "long", "batch_chars": 25_000})
    batches: list[int] = []
    real = embed_job.embed_documents

    def counted(encoder, texts, *args, **kwargs):
        batches.append(sum(len(t) for t in texts))
        return real(encoder, texts, *args, **kwargs)

    monkeypatch.setattr(embed_job, "embed_documents", counted)
    assert work(app, stop_when_idle=True) == 1
    assert batches == [20_000, 20_000, 10_000]
    rows, distinct, counter, documents = stored(app)
    assert rows == distinct == counter == documents == 5


@pytest.mark.parametrize(("lengths", "max_chars", "taken"), [
    ([4, 4, 4], 9, 2), ([4, 4, 4], 12, 3), ([99, 1], 9, 1), ([1, 1, 5], 4, 2)])
def test_a_page_of_missing_documents_stops_at_its_characters(app, lengths, max_chars, taken):
    create_corpus(app, "t")
    docs.upsert(app, "t", [docs.Doc(f"d{i}", "x" * n) for i, n in enumerate(lengths)])
    with app.db.session() as s:
        corpus = repo.get_corpus(s, "t")
        model = repo.find_model(s, corpus.model_name)
        model_id = model.id if model else -1
        page = repo.documents_missing_embedding(s, corpus.id, model_id, 0, 100, max_chars)
    assert len(page) == taken


class Stop(Exception):
    """What the test's checkpoint raises, as a cancelled job's raises JobCancelled."""


def stop_at(call: int, calls: list[int]):
    """A checkpoint that counts its calls and raises Stop at call number ``call``."""
    def checkpoint() -> None:
        calls.append(len(calls) + 1)
        if len(calls) >= call:
            raise Stop()
    return checkpoint


def test_the_encoder_checks_between_its_batches(tiny_bert):
    """3,000 short sentences (one tokenizer call, many batches): a stop asked at the third
    checkpoint ends the call there, with the rest not encoded."""
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    sentences = [f"{SENTENCES[i % 4].strip()} {i}" for i in range(3000)]
    calls: list[int] = []
    with pytest.raises(Stop):
        encoder.encode(sentences, checkpoint=stop_at(3, calls))
    assert calls == [1, 2, 3]
    counted: list[int] = []
    encoder.encode(sentences[:50], checkpoint=lambda: counted.append(1))
    assert len(counted) >= 2, "one tokenizer call and one batch at least"


def test_planning_long_texts_checks_between_its_tokenizer_calls(tiny_bert):
    """Three texts of 150,000 characters are tokenised for planning in three calls, each
    after a checkpoint, so a stop lands before the next one."""
    encoder = SiameseEncoder.load(tiny_bert, device="cpu")
    texts = [long_text(i)[:150_000] for i in range(3)]
    calls: list[int] = []
    with pytest.raises(Stop):
        passages.plan(encoder, texts, checkpoint=stop_at(2, calls))
    assert calls == [1, 2]
    assert len(speed.char_chunks([len(t) for t in texts])) == 3
