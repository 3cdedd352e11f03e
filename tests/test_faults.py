"""Fault injection: ``kill -9`` the worker at random points of every job kind; nothing is lost.

Each job kind (embed, duplicates, clusters, finetune) first runs once without
a fault: that run is the reference, and it counts the fault points a whole
run passes (``searchapp.jobs.tasks.fault_point``: the job claimed, every
progress report, each committed embed batch, the task returned but its result
not yet recorded). Then fresh jobs of the kind run in worker processes started
with ``SEARCHAPP_FAULT_KILL_AT=N``, N drawn from a seeded RNG among the points
the job has left: the worker SIGKILLs itself exactly there, and the next worker
takes the job over, until one runs it to its end. No sleeps decide where a kill
lands, so every run of the test kills at the same points.

What is checked after each job, against the reference run:

- embed: one embeddings row per document (and the embedded counter agrees),
  every text encoded exactly once over all the worker runs together (a
  committed batch is never encoded again), the saved index file at the
  corpus' generation with the database's labels and vectors, and the vectors
  equal to the reference run's;
- duplicates: the stored pairs (a, b, exact) identical, scores within 1e-6;
- clusters: community detection over exact k-NN (no randomness) and a PCA map
  with its fixed seed: the same document ids, the same cluster of every
  document, the same cluster names, sizes and examples, map coordinates
  within 1e-5;
- finetune: the run resumed from the last checkpoint a killed run wrote (the
  step is computed from where the kills landed, and is > 0 whenever a kill came
  after the first checkpoint), every training step logged once, and the model's
  vectors within 1e-5 of the uninterrupted run's.

Worker processes are forked from a ``multiprocessing`` fork server that has
imported torch, scikit-learn and searchapp once, so a restart costs a fork and
a 2-layer model load instead of seconds of imports; each is still its own
process, killed by the kernel, its connections and files left as they were.

The busy tests hold SQLite's write lock from another process: a write that
waits past ``SEARCHAPP_BUSY_TIMEOUT`` ends in one "database is busy" line,
nothing of it stored and the database intact.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import pytest
from sqlalchemy import delete, func, select

from searchapp.context import App
from searchapp.embedding.models import CARD_FILE
from searchapp.intake import table_upload
from searchapp.intake.ingest import read_table
from searchapp.jobs import queue
from searchapp.store import repo
from searchapp.store.schema import Analysis, EmbeddedCount, Embedding
from searchapp.vectors.index import VectorIndex
from searchapp.vectors.index_cache import IndexKey
from tests.test_training import rows_for

EMBED_BATCH = 8  # documents per committed batch in the workers here: 32 batches
RUN_DEADLINE = 180.0  # seconds one worker run may take before the test fails
SEED = 20261123
SUBJECTS = ["the cat", "a dog", "my neighbour", "the old ship", "a small bird", "the teacher",
            "our train", "the river"]
VERBS = ["sleeps", "waits", "sings", "runs", "rests"]
PLACES = ["by the door", "in the rain", "near the bridge", "under a tree", "at noon",
          "on the hill"]
DUPLICATES = {"threshold": 0.99, "k": 5}  # about 1% of this corpus' pairs, plus exact ones
CLUSTERS = {"method": "community", "threshold": 0.98, "min_size": 5, "projection": "pca"}
FINETUNE = {"epochs": 2, "batch_size": 4, "checkpoint_every": 4, "seed": 7}
PROBE = ["a dog runs in the rain", "the teacher sings at noon", "our train waits"]
KILL_BEFORE_CARD = "FAULT_TEST_KILL_BEFORE_CARD"  # read by the test's worker entry only
FAULT_LINE = re.compile(r"fault injection: SIGKILL at point (\d+) \((.*)\)")
PRELOAD = ["torch", "transformers", "sklearn.cluster", "sklearn.decomposition",
           "searchapp.context", "searchapp.embedding.encoder", "searchapp.jobs.worker",
           "searchapp.corpora.embed_job", "searchapp.duplicates.service",
           "searchapp.clusters.service", "searchapp.training.task",
           "searchapp.training.trainer"]


def corpus_csv() -> bytes:
    """256 short texts: 240 distinct sentences, 16 of them repeated under other ids."""
    texts = [f"{s} {v} {p}" for s in SUBJECTS for v in VERBS for p in PLACES]
    texts += texts[::15]
    rows = ["id,text"] + [f"d{i},{t}" for i, t in enumerate(texts)]
    return ("\n".join(rows) + "\n").encode()


# ---- worker processes ------------------------------------------------------------------
# Streamlit's script runner installs each page script as ``__main__`` and AppTest leaves it
# there; multiprocessing would then re-run that page in every worker it starts (spawn's
# "prepare" imports the parent's main module). The workers are started beside pytest's own.
_PYTEST_MAIN = sys.modules["__main__"]


@contextlib.contextmanager
def _pytest_main() -> Iterator[None]:
    """``__main__`` as pytest set it, while a worker process is started."""
    current = sys.modules["__main__"]
    sys.modules["__main__"] = _PYTEST_MAIN
    try:
        yield
    finally:
        sys.modules["__main__"] = current


def _fork_server() -> multiprocessing.context.BaseContext:
    """The fork-server context; the server imports PRELOAD once, before its first fork."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _worker_entry(env: dict[str, str], log_path: str, out_path: str) -> None:
    """A worker process: work the queue until it is empty, as ``searchapp worker --once``.

    Output goes to ``log_path`` (the fault line, one ``encoded N`` line per
    encoder call); the fault points passed go to ``out_path`` at the end.
    """
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.environ.clear()
    os.environ.update(env)
    from searchapp.corpora import embed_job
    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.jobs import tasks
    from searchapp.jobs.worker import work

    embed_job.BATCH_CPU = EMBED_BATCH
    real_encode = SiameseEncoder.encode

    def counted(self, texts, *args, **kwargs):
        vectors = real_encode(self, texts, *args, **kwargs)
        print(f"encoded {len(texts)}", file=sys.stderr, flush=True)
        return vectors

    SiameseEncoder.encode = counted
    if env.get(KILL_BEFORE_CARD):
        _kill_before_the_model_card()
    ran = work(App(), stop_when_idle=True)
    Path(out_path).write_text(json.dumps({"ran": ran, "points": tasks.fault_points_passed()}))


def _kill_before_the_model_card() -> None:
    """Make this worker SIGKILL itself after a fine-tuned model's weights are written and
    before its card is (a window the production fault points do not reach)."""
    from searchapp.training import task

    def killed_instead(path: Path, card: dict) -> None:
        print("fault injection: SIGKILL at point 0 (finetune model saved, card not written)",
              file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    task.write_card = killed_instead


@dataclass
class WorkerRun:
    """How one worker process ended: SIGKILLed at a fault point, or done with the queue."""

    kill_at: int | None
    exitcode: int
    point: str | None  # the fault point it died at
    points: int | None  # fault points passed, when it ran to the end
    encoded: int  # texts it encoded
    log: Path

    @property
    def killed(self) -> bool:
        return self.exitcode == -signal.SIGKILL

    @property
    def errors(self) -> list[str]:
        """Tracebacks and failed jobs in its log (a SIGKILL is not an error here)."""
        text = self.log.read_text() if self.log.exists() else ""
        return [line for line in text.splitlines()
                if line.startswith("Traceback") or " crashed" in line]


def run_worker(ctx, env: dict[str, str], folder: Path, kill_at: int | None) -> WorkerRun:
    """Start a worker process (killing itself at fault point ``kill_at``) and wait for its end."""
    folder.mkdir(parents=True, exist_ok=True)
    n = len(list(folder.glob("*.log")))
    log, out = folder / f"run{n}.log", folder / f"run{n}.json"
    # without a kill the points are still counted: a kill point past any run's end
    env = {**env, "SEARCHAPP_FAULT_KILL_AT": str(kill_at or 10**9)}
    process = ctx.Process(target=_worker_entry, args=(env, str(log), str(out)))
    with _pytest_main():
        process.start()
    process.join(RUN_DEADLINE)
    if process.is_alive():
        process.kill()
        process.join()
        raise AssertionError(f"a worker run took over {RUN_DEADLINE} s; see {log}")
    text = log.read_text() if log.exists() else ""
    fault = FAULT_LINE.search(text)
    done = json.loads(out.read_text()) if out.exists() else {}
    encoded = sum(int(m) for m in re.findall(r"^encoded (\d+)$", text, re.M))
    return WorkerRun(kill_at, process.exitcode, fault and fault.group(2), done.get("points"),
                     encoded, log)


def worker_env(data_dir: Path) -> dict[str, str]:
    """The test's environment for worker processes: its data folder, CPU, exact float32."""
    return {**os.environ, "SEARCHAPP_DATA_DIR": str(data_dir), "SEARCHAPP_DEVICE": "cpu",
            "SEARCHAPP_PRECISION": "fp32", "TOKENIZERS_PARALLELISM": "false",
            "OMP_NUM_THREADS": "1"}


# ---- the job kinds ---------------------------------------------------------------------
class Scenario(Protocol):
    """One job kind: how to queue a fresh job, bound its fault points, and check it."""

    kind: str

    def enqueue(self, app: App, round_: int) -> int: ...

    def points_left(self, app: App, job_id: int, full: int, runs: list[WorkerRun]) -> int:
        ...

    def outcome(self, app: App, job_id: int) -> object: ...

    def check(self, app: App, job_id: int, reference: object, runs: list[WorkerRun]) -> None:
        ...


def upload(app: App, name: str) -> int:
    """Store the corpus under ``name`` for the model ``tiny``; returns its embed job."""
    summary = table_upload.upload(app, read_table(corpus_csv(), "docs.csv"), name, "text", "id",
                             model="tiny")
    assert summary.job_id is not None
    return summary.job_id


def corpus_ids(app: App, job_id: int) -> tuple[int, int]:
    """(corpus id, model id) of the corpus a job works on."""
    name = queue.get(app.db, job_id).payload["corpus"]
    with app.db.session() as s:
        return repo.get_corpus(s, name).id, repo.find_model(s, "tiny").id


def stored_vectors(app: App, corpus_id: int, model_id: int) -> dict[str, np.ndarray]:
    """{external id: vector} of a corpus, from the embeddings table."""
    with app.db.session() as s:
        ids = dict(repo.external_ids(s, corpus_id))
        parts = list(repo.embeddings_since(s, corpus_id, model_id, 0, 32))
    return {ids[int(i)]: v for labels, vectors in parts
            for i, v in zip(labels, vectors, strict=True)}


class Embed:
    """``embed`` jobs, each on a new corpus of the same texts; resumable per batch."""

    kind = "embed"

    def enqueue(self, app: App, round_: int) -> int:
        return upload(app, f"c{round_}")

    def points_left(self, app: App, job_id: int, full: int, runs: list[WorkerRun]) -> int:
        """Exact: a restart passes the fixed points again and two per batch still to commit."""
        corpus_id, model_id = corpus_ids(app, job_id)
        with app.db.session() as s:
            committed = repo.count_embedded(s, corpus_id, model_id) // EMBED_BATCH
        return full - 2 * committed

    def outcome(self, app: App, job_id: int) -> dict[str, np.ndarray]:
        return stored_vectors(app, *corpus_ids(app, job_id))

    def check(self, app: App, job_id: int, reference: dict[str, np.ndarray],
              runs: list[WorkerRun]) -> None:
        corpus_id, model_id = corpus_ids(app, job_id)
        with app.db.session() as s:
            documents = repo.count_documents(s, corpus_id)
            rows, distinct = s.execute(select(
                func.count(), func.count(Embedding.document_id.distinct())).where(
                Embedding.corpus_id == corpus_id, Embedding.model_id == model_id)).one()
            counter = s.scalar(select(EmbeddedCount.count).where(
                EmbeddedCount.corpus_id == corpus_id, EmbeddedCount.model_id == model_id))
            generation = repo.current_generation(s, corpus_id)
        assert rows == distinct == counter == documents == 256, "one vector per document"
        assert sum(r.encoded for r in runs) == documents, "every text encoded exactly once"
        vectors = self.outcome(app, job_id)
        assert sorted(vectors) == sorted(reference)
        for key, vector in vectors.items():
            np.testing.assert_allclose(vector, reference[key], atol=1e-5)
        assert_index_file_is_the_database(app, corpus_id, model_id, generation)


def assert_index_file_is_the_database(app: App, corpus_id: int, model_id: int,
                                      generation: int) -> None:
    """The saved index file is at ``generation`` with exactly the stored labels and vectors."""
    path = app.indexes.path(IndexKey(corpus_id, model_id))
    index = VectorIndex.load(path, {"corpus_id": corpus_id, "model_id": model_id,
                                    "dimension": 32})
    assert index.meta["generation"] == generation
    with app.db.session() as s:
        parts = list(repo.embeddings_since(s, corpus_id, model_id, 0, 32))
    expected = {int(i): v for labels, vectors in parts for i, v in zip(labels, vectors,
                                                                       strict=True)}
    labels = index.labels()
    assert labels.tolist() == sorted(expected)
    np.testing.assert_allclose(index.vectors(labels), np.stack([expected[i] for i in labels]),
                               atol=1e-6)


class Stored:
    """``duplicates`` or ``clusters`` jobs on one embedded corpus; not resumable, so a
    restart computes again (or finds the result a killed run stored, and returns it)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def enqueue(self, app: App, round_: int) -> int:
        from searchapp.clusters.params import ClusterParams
        from searchapp.clusters.service import request_clusters
        from searchapp.duplicates.service import request_mining

        with app.db.session() as s:  # the result of the run before: computed again
            s.execute(delete(Analysis).where(Analysis.kind == self.kind))
        if self.kind == "duplicates":
            return request_mining(app, "base", **DUPLICATES)
        return request_clusters(app, "base", ClusterParams(**CLUSTERS))[1]

    def points_left(self, app: App, job_id: int, full: int, runs: list[WorkerRun]) -> int:
        """Exact: a restart computes it all again, unless a killed run had stored it: then
        it is claimed, (clusters) reports the end, and returns."""
        with app.db.session() as s:
            stored = s.scalar(select(func.count()).where(Analysis.kind == self.kind))
        return full if not stored else 2 if self.kind == "duplicates" else 3

    def outcome(self, app: App, job_id: int) -> tuple[dict, dict[str, np.ndarray]]:
        """The stored result (times left out) and its arrays, at the corpus' generation."""
        with app.db.session() as s:
            [row] = s.scalars(select(Analysis).where(Analysis.kind == self.kind)).all()
            assert row.generation == repo.current_generation(s, row.corpus_id)
            info = {k: v for k, v in row.result.items() if k != "seconds"}
            arrays = repo.unpack_arrays(row.arrays)
        if self.kind == "duplicates":  # something to compare: pairs, exact ones among them
            assert 0 < arrays["exact"].sum() < len(arrays["exact"])
        else:
            assert len(info["clusters"]) >= 2 and (arrays["cluster"] == -1).any()
        return info, arrays

    def check(self, app: App, job_id: int, reference: tuple[dict, dict[str, np.ndarray]],
              runs: list[WorkerRun]) -> None:
        info, arrays = self.outcome(app, job_id)
        assert info == reference[0]
        assert sorted(arrays) == sorted(reference[1])
        for key, values in arrays.items():
            if values.dtype.kind == "f":
                np.testing.assert_allclose(values, reference[1][key], atol=1e-5, err_msg=key)
            else:
                np.testing.assert_array_equal(values, reference[1][key], err_msg=key)


class Finetune:
    """``finetune`` jobs, a new model name each; resumable from the last checkpoint."""

    kind = "finetune"

    def __init__(self) -> None:
        self.resumed_from: list[int | None] = []  # per checked job: the step it resumed at

    def enqueue(self, app: App, round_: int) -> int:
        from searchapp.training.task import request_finetune

        return request_finetune(app, rows_for("regression", 64).encode(), name=f"tuned-{round_}",
                              train_filename="pairs.csv", base="tiny", **FINETUNE).job_id

    def points_left(self, app: App, job_id: int, full: int, runs: list[WorkerRun]) -> int:
        """Exact: the fixed points again and the steps after the last checkpoint, or just
        claimed and returned once the model is saved with its card."""
        name = queue.get(app.db, job_id).payload["name"]
        if (app.settings.models_dir / name / CARD_FILE).is_file():
            return 2
        steps = full - 4  # claimed, the first report, the last one, returned
        return full - (expected_resume(runs, steps) or 0)

    def outcome(self, app: App, job_id: int) -> np.ndarray:
        from searchapp.embedding.encoder import SiameseEncoder

        name = queue.get(app.db, job_id).payload["name"]
        model = SiameseEncoder.load(app.settings.models_dir / name, device="cpu",
                                    precision="fp32")
        return model.encode(PROBE)

    def check(self, app: App, job_id: int, reference: np.ndarray,
              runs: list[WorkerRun]) -> None:
        from searchapp.training.task import training_history

        job = queue.get(app.db, job_id)
        history = training_history(app, job.payload["name"])
        total = history["total"]
        assert [e["step"] for e in history["entries"] if "loss" in e] == list(range(1, total + 1))
        assert job.result["resumed_from"] == expected_resume(runs, total)
        self.resumed_from.append(job.result["resumed_from"])
        np.testing.assert_allclose(self.outcome(app, job_id), reference, atol=1e-5)


def expected_resume(runs: list[WorkerRun], total: int) -> int | None:
    """The checkpoint the last training run started from, replayed from where the kills landed.

    A training run passes its fault points in a fixed order: 1 the claim, 2 the
    report before training, then the report of each step after the checkpoint
    it resumed from, then the report once the model is saved, then the return.
    A kill at the report of step s comes after the checkpoint of step s when s
    is a multiple of ``checkpoint_every`` below ``total`` (none is written at the
    last step, so a kill there leaves the one before it); a kill at the
    saved-model report or later leaves the model with its card, and the next
    run trains nothing.
    """
    every, latest = FINETUNE["checkpoint_every"], 0
    for run in runs:
        if not run.killed:
            continue
        step = latest + run.kill_at - 2  # point 3 is the step after the checkpoint
        if run.kill_at >= 3 and step <= total:
            assert run.point == f"progress {step}/{total}", (run.point, step)
            latest = max(latest, every * (min(step, total - 1) // every))
    return latest or None


# ---- the trials ------------------------------------------------------------------------
@dataclass
class Tally:
    """What the trials of one kind did: kills by fault point, jobs, failures."""

    kind: str
    full: int  # fault points of a whole run
    kills: int = 0
    jobs: int = 0
    worker_runs: int = 0
    points: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, run: WorkerRun) -> None:
        assert run.killed or run.exitcode == 0, (run, run.log.read_text())
        assert run.errors == [], (run, run.log.read_text())
        self.worker_runs += 1
        if run.killed:
            self.kills += 1
            where = re.sub(r"[\d/]+|job \d+ ", "", run.point or "?").strip()
            self.points[where] = self.points.get(where, 0) + 1

    def line(self) -> str:
        return (f"{self.kind}: {self.kills} kills over {self.jobs} jobs ({self.full} fault "
                f"points in a whole run), {self.worker_runs} worker runs, 0 errors, 0 lost; "
                f"kill points {self.points}; {self.seconds:.1f} s")


def make_scenario(kind: str) -> Scenario:
    return {"embed": Embed(), "finetune": Finetune()}.get(kind) or Stored(kind)


def prepare(app: App, tiny_bert: Path, kind: str, ctx, env: dict[str, str], logs: Path
            ) -> None:
    """The model ``tiny`` registered; for duplicates and clusters, the corpus ``base`` embedded."""
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    if kind in ("duplicates", "clusters"):
        job_id = upload(app, "base")
        run_worker(ctx, env, logs, None)
        assert queue.get(app.db, job_id).status == "succeeded"


def reference_run(app: App, scenario: Scenario, ctx, env: dict[str, str], logs: Path
                  ) -> tuple[object, int]:
    """The job run without a fault: its outcome, and the fault points a whole run passes."""
    job_id = scenario.enqueue(app, 0)
    run = run_worker(ctx, env, logs, None)
    job = queue.get(app.db, job_id)
    assert job.status == "succeeded", job.error
    return scenario.outcome(app, job_id), run.points


def run_trials(app: App, scenario: Scenario, kills: int, per_job: int, ctx,
               env: dict[str, str], logs: Path) -> Tally:
    """Kill workers ``kills`` times in all (at most ``per_job`` per job), each job then
    run to its end by one more worker and checked against the reference run."""
    started = time.monotonic()
    rng = random.Random(f"{SEED}-{scenario.kind}")
    reference, full = reference_run(app, scenario, ctx, env, logs)
    tally = Tally(scenario.kind, full)
    while tally.kills < kills:
        tally.jobs += 1
        job_id, runs = scenario.enqueue(app, tally.jobs), []
        for _ in range(min(per_job, kills - tally.kills)):
            left = max(1, scenario.points_left(app, job_id, full, runs))
            runs.append(run_worker(ctx, env, logs, rng.randint(1, left)))
            tally.add(runs[-1])
            if queue.get(app.db, job_id).finished:
                break
        if not queue.get(app.db, job_id).finished:
            runs.append(run_worker(ctx, env, logs, None))
            tally.add(runs[-1])
        job = queue.get(app.db, job_id)
        assert job.status == "succeeded", (job.status, job.error)
        scenario.check(app, job_id, reference, runs)
    tally.seconds = time.monotonic() - started
    print(tally.line())
    return tally


KINDS = ["embed", "duplicates", "clusters", "finetune"]


@pytest.fixture(scope="module")
def fork_server():
    return _fork_server()


@pytest.mark.parametrize("kind", KINDS)
def test_a_worker_killed_at_random_points_loses_nothing(kind, app, tiny_bert, fork_server,
                                                        tmp_path):
    """Two kills per kind (one job), then the job finishes equal to an uninterrupted run."""
    env, logs = worker_env(app.settings.data_dir), tmp_path / "logs"
    prepare(app, tiny_bert, kind, fork_server, env, logs)
    scenario = make_scenario(kind)
    tally = run_trials(app, scenario, 2, 2, fork_server, env, logs)
    assert (tally.kills, tally.jobs, tally.worker_runs) == (2, 1, 3)
    if isinstance(scenario, Finetune):
        assert scenario.resumed_from[0] > 0, "the seeded kills come after a checkpoint"


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_worker_killed_20_times_per_kind_loses_nothing(kind, app, tiny_bert, fork_server,
                                                         tmp_path):
    """At least 20 kills per kind, up to 4 per job, every job checked."""
    env, logs = worker_env(app.settings.data_dir), tmp_path / "logs"
    prepare(app, tiny_bert, kind, fork_server, env, logs)
    scenario = make_scenario(kind)
    tally = run_trials(app, scenario, 20, 4, fork_server, env, logs)
    assert tally.kills >= 20
    if isinstance(scenario, Finetune):
        assert any(scenario.resumed_from), "some job resumed from a checkpoint"


def test_a_worker_killed_between_the_model_weights_and_its_card_still_finishes(
        app, tiny_bert, fork_server, tmp_path):
    """Killed with the weights written and the card not: no model without a card is
    listed, and the next worker ends the job as if the kill had come a moment earlier."""
    env, logs = worker_env(app.settings.data_dir), tmp_path / "logs"
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    job_id = Finetune().enqueue(app, 1)
    killed = run_worker(fork_server, {**env, KILL_BEFORE_CARD: "1"}, logs, None)
    assert killed.killed and killed.point == "finetune model saved, card not written"
    assert not (app.settings.models_dir / "tuned-1").exists()
    run_worker(fork_server, env, logs, None)
    job = queue.get(app.db, job_id)
    assert job.status == "succeeded", job.error
    assert (app.settings.models_dir / "tuned-1" / CARD_FILE).is_file()


# ---- a write lock held by another process ----------------------------------------------
HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("CREATE TABLE held_by_another_process (x)")
db.execute("INSERT INTO held_by_another_process VALUES (1)")
print("locked", flush=True)
if len(sys.argv) > 2:
    time.sleep(float(sys.argv[2]))  # then exits mid-transaction: it is rolled back
else:
    sys.stdin.readline()  # holds until killed
"""


def hold_write_lock(db_file: Path, seconds: float | None = None) -> subprocess.Popen:
    """Another process in the middle of a write transaction on ``db_file``: it holds the
    write lock for ``seconds`` (or until killed), then ends without committing."""
    args = [sys.executable, "-c", HOLDER, str(db_file)] + ([str(seconds)] if seconds else [])
    holder = subprocess.Popen(args, text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdout.readline().strip() == "locked"
    return holder


def assert_intact(db_file: Path) -> None:
    """SQLite's own check passes and the killed holder's transaction left nothing behind."""
    with sqlite3.connect(db_file) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("SELECT name FROM sqlite_master WHERE name = "
                          "'held_by_another_process'").fetchall() == []


def ingest_command(csv: Path, corpus: str) -> list[str]:
    return [sys.executable, "-m", "searchapp", "ingest", str(csv), "--corpus", corpus]


def ingest_env(busy_seconds: float | None) -> dict[str, str]:
    """The test's environment, model ``tiny``, SEARCHAPP_BUSY_TIMEOUT (unset: the default)."""
    env = {**os.environ, "SEARCHAPP_MODEL": "tiny"}
    env.pop("SEARCHAPP_BUSY_TIMEOUT", None)
    if busy_seconds is not None:
        env["SEARCHAPP_BUSY_TIMEOUT"] = str(busy_seconds)
    return env


def ingest(csv: Path, corpus: str, busy_seconds: float | None) -> subprocess.CompletedProcess:
    """``searchapp ingest`` in its own process, waiting at most ``busy_seconds`` for a lock."""
    return subprocess.run(ingest_command(csv, corpus), capture_output=True,
                          text=True, env=ingest_env(busy_seconds), timeout=300)


def test_a_write_lock_held_elsewhere_is_a_one_line_busy_error_and_nothing_half_written(
        app, tiny_bert, tmp_path):
    """A write waits SEARCHAPP_BUSY_TIMEOUT (0.5 s here) and then fails in one line."""
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    csv = tmp_path / "docs.csv"
    csv.write_bytes(corpus_csv())
    db_file = app.settings.data_dir / "searchapp.db"
    holder = hold_write_lock(db_file)
    try:
        started = time.monotonic()
        refused = ingest(csv, "waiting", busy_seconds=0.5)
        waited = time.monotonic() - started
    finally:
        holder.kill()  # dies in the middle of its transaction
        holder.wait()
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("error: The database is busy") and "SEARCHAPP_BUSY_TIMEOUT" in line
    assert waited >= 0.5
    assert_intact(db_file)
    with app.db.session() as s:
        assert repo.find_corpus(s, "waiting") is None  # nothing of the refused upload
    assert ingest(csv, "waiting", busy_seconds=0.5).returncode == 0  # the lock is gone: works
    with app.db.session() as s:
        assert repo.count_documents(s, repo.get_corpus(s, "waiting").id) == 256


def test_a_write_during_another_process_transaction_raises_database_busy(app):
    """In-process: the session rolls back and raises DatabaseBusyError, naming the timeout."""
    from searchapp.errors import DatabaseBusyError
    from searchapp.store.db import Database

    db_file = app.settings.data_dir / "searchapp.db"
    impatient = Database(app.db.url, busy_seconds=0.2)
    holder = hold_write_lock(db_file)
    try:
        with pytest.raises(DatabaseBusyError, match=r"more than 0\.2 s.*nothing was written"), \
                impatient.session() as s:
            repo.get_or_create_corpus(s, "blocked", "tiny")
        with impatient.session() as s:  # readers are not blocked (WAL)
            assert repo.find_corpus(s, "blocked") is None
    finally:
        holder.kill()
        holder.wait()
        impatient.dispose()
    assert_intact(db_file)


@pytest.mark.slow
def test_a_write_lock_held_60_seconds(app, tiny_bert, tmp_path):
    """The issue's case: a transaction held for 60 s. With the default 30 s the upload fails
    in one line; with SEARCHAPP_BUSY_TIMEOUT=90 it waits for the lock and then succeeds."""
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    csv = tmp_path / "docs.csv"
    csv.write_bytes(corpus_csv())
    db_file = app.settings.data_dir / "searchapp.db"
    holder = hold_write_lock(db_file, seconds=60)
    try:
        started = time.monotonic()
        patient = subprocess.Popen(ingest_command(csv, "patient"), text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env=ingest_env(90))
        refused = subprocess.run(ingest_command(csv, "refused"), capture_output=True,
                                 text=True, env=ingest_env(None), timeout=300)
        refused_after = time.monotonic() - started
        _, patient_err = patient.communicate(timeout=300)
    finally:
        holder.kill()
        holder.wait()
    assert refused.returncode == 1 and refused_after >= 30
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("error: The database is busy") and "30 s" in line
    assert patient.returncode == 0, patient_err
    assert_intact(db_file)
    with app.db.session() as s:
        assert repo.find_corpus(s, "refused") is None
        assert repo.count_documents(s, repo.get_corpus(s, "patient").id) == 256
