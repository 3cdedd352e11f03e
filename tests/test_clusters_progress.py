"""A clusters job's steps 2 (clustering) and 3 (the map) count their work, so a rate shows.

The counts come from the algorithms themselves: candidate centres of community
detection, k-means runs, UMAP's epochs, documents projected by PCA. Watching
must not change what they compute.
"""

from __future__ import annotations

import re
import sys
import types
from types import SimpleNamespace

import numpy as np
import pytest

from searchapp.cli.jobs import job_row as _job_row
from searchapp.clusters import ClusterParams, algorithms, projection, request_clusters
from searchapp.clusters.algorithms import community_detection, far_members, kmeans_clusters
from searchapp.clusters.compute import compute
from searchapp.clusters.epochs import EpochCounter
from searchapp.clusters.params import STEPS
from searchapp.clusters.service import job_progress
from searchapp.jobs import queue, tasks
from searchapp.jobs.horizon import split_message
from searchapp.jobs.tasks import TaskContext
from searchapp.jobs.worker import run_until_done
from searchapp.ui.common import progress_text
from searchapp.vectors.index import VectorIndex
from tests.test_clusters import make_corpus, planted

FAKE_EPOCHS = 12


class FakeUMAP:
    """``umap.UMAP`` as ``reduce`` calls it, its epochs a tqdm loop as in ``umap.layouts``.

    umap-learn needs a minute of numba compiling on a small CPU; the real one
    is in ``test_umap_epochs_are_counted_and_its_layout_unchanged`` (slow).
    """

    def __init__(self, n_components: int, tqdm_kwds: dict | None = None, **_):
        self.n_components, self.tqdm_kwds = n_components, dict(tqdm_kwds or {})

    def fit_transform(self, vectors: np.ndarray) -> np.ndarray:
        from tqdm.auto import tqdm

        self.tqdm_kwds.setdefault("disable", True)  # umap-learn: disable = not verbose
        for _ in tqdm(range(FAKE_EPOCHS), **self.tqdm_kwds):
            pass
        return vectors[:, :self.n_components].copy()


@pytest.fixture
def fake_umap(monkeypatch):
    monkeypatch.setitem(sys.modules, "umap", types.SimpleNamespace(UMAP=FakeUMAP))


def recorded(index: VectorIndex, params: ClusterParams, texts: list[str]) -> list[tuple]:
    """compute()'s reports: (step, message, items, unit)."""
    reports = []
    compute(index, params, lambda ids: [texts[i] for i in ids],
            lambda step, steps, message, items=None, unit=None: reports.append(
                (step, message, items, unit)))
    return reports


def planted_index(**kwargs) -> tuple[VectorIndex, list[str]]:
    vectors, _, texts = planted(**kwargs)
    index = VectorIndex(vectors.shape[1])
    index.add(np.arange(len(vectors)), vectors)
    return index, texts


def counts(reports: list[tuple], step: int) -> dict[str, list[tuple[int, int]]]:
    """{unit: [(done, total), ...]} that ``step`` reported."""
    out: dict[str, list[tuple[int, int]]] = {}
    for s, _, items, unit in reports:
        if s == step and items is not None:
            out.setdefault(unit, []).append(items)
    return out


# ---- what each step counts ------------------------------------------------------------
def test_community_detection_counts_candidate_centres(monkeypatch):
    monkeypatch.setattr(algorithms, "ROWS_PER_REPORT", 20)
    index, texts = planted_index()
    reports = recorded(index, ClusterParams("community", projection="pca"), texts)
    documents = counts(reports, 2)["documents"]
    total = documents[0][1]
    assert documents == [(done, total) for done in range(0, total, 20)] + [(total, total)]
    assert any("candidate centres tried" in m for s, m, _, _ in reports if s == 2)


def test_kmeans_counts_its_runs():
    index, texts = planted_index()
    reports = recorded(index, ClusterParams("kmeans", k=4, projection="pca"), texts)
    assert counts(reports, 2) == {"runs": [(0, 3), (1, 3), (2, 3), (3, 3)]}


def test_a_single_kmeans_run_says_it_has_no_count(monkeypatch):
    monkeypatch.setattr(algorithms, "kmeans_starts", lambda n: 1)
    index, texts = planted_index()
    reports = recorded(index, ClusterParams("kmeans", k=4, projection="pca"), texts)
    assert counts(reports, 2) == {}
    assert [m for s, m, _, _ in reports if s == 2] == [
        "Clustering by k-means (k=4): one run over 121 documents, with no progress from "
        "scikit-learn to count"]


def test_pca_counts_documents_projected_chunk_by_chunk(monkeypatch):
    monkeypatch.setattr(projection, "CHUNK", 50)
    index, texts = planted_index()  # 121 documents: chunks of 50, 50, 21
    reports = recorded(index, ClusterParams("hdbscan", projection="pca"), texts)
    for step in (2, 3):  # the 5-d reduction for HDBSCAN, then the map
        assert counts(reports, step) == {"documents": [(0, 121), (50, 121), (100, 121)]}
    said = [m for s, m, _, _ in reports if s == 2]
    assert said[0] == "Reducing to 5 dimensions for HDBSCAN: PCA axes from 121 documents"
    assert said[-1].startswith("Clustering by HDBSCAN on the 5-d reduction of 121 documents")


def test_umap_epochs_are_counted_in_steps_2_and_3(fake_umap):
    index, texts = planted_index()
    reports = recorded(index, ClusterParams("hdbscan", projection="umap"), texts)
    for step in (2, 3):
        assert counts(reports, step) == {"epochs": [(e, FAKE_EPOCHS)
                                                    for e in range(1, FAKE_EPOCHS + 1)]}
    said = [m for s, m, _, _ in reports if s == 3]
    assert said[:3] == ["Drawing the map: UMAP, weighing the neighbour graph and laying out a "
                        "spectral start", "Drawing the map: UMAP, epoch 0 of 12",
                        "Drawing the map: UMAP, epoch 1 of 12"]


def test_the_epoch_counter_reads_tqdm_as_umap_runs_it():
    from tqdm.auto import tqdm

    seen = []
    counter = EpochCounter(lambda done, total: seen.append((done, total)))
    for _ in tqdm(range(5), **{"disable": True, **counter.tqdm_kwds()}):
        pass
    assert seen == [(e, 5) for e in range(6)]


# ---- watching changes nothing -----------------------------------------------------------
def test_counted_kmeans_is_scikit_learns_kmeans():
    from sklearn.cluster import KMeans

    vectors, _, _ = planted(sizes=(60, 50, 40, 30), noise=0.9)  # 6 groups in 4: runs differ
    runs = []
    found = kmeans_clusters(vectors, 6, on_start=lambda done, total: runs.append(done))
    plain = KMeans(n_clusters=6, n_init=3, random_state=0).fit_predict(vectors)
    assert np.array_equal(found, far_members(vectors, plain.astype(np.int64)))
    assert runs == [0, 1, 2, 3]


def test_counted_community_detection_is_the_same():
    index, _ = planted_index(sizes=(120, 90), noise=0.3)
    labels, scores = index.knn_graph(30)
    neighbours = np.searchsorted(index.labels(), labels)
    counted = community_detection(neighbours, scores, 0.4, 3, on_rows=lambda d, t: None)
    assert np.array_equal(counted, community_detection(neighbours, scores, 0.4, 3))


@pytest.mark.slow  # umap-learn's first call compiles with numba: ~1 min on a busy small CPU
def test_umap_epochs_are_counted_and_its_layout_unchanged():
    import umap

    index, _ = planted_index()
    vectors = index.vectors(index.labels())
    labels, scores = index.knn_graph(30)
    neighbours = np.searchsorted(index.labels(), labels)
    seen = []
    coords = projection.umap_coords(vectors, 2, neighbours, scores, phase=lambda what,
                                    items=None, unit=None: seen.append((what, items, unit)))
    plain = umap.UMAP(n_components=2, n_neighbors=15, metric="cosine", min_dist=0.1,
                      random_state=0, init="spectral",
                      precomputed_knn=(*projection._umap_knn(neighbours, scores, 15), None))
    assert np.array_equal(coords, plain.fit_transform(vectors).astype(np.float32))
    epochs = [items for _, items, unit in seen if unit == "epochs" and items]
    assert epochs == [(e, 500) for e in range(1, 501)]  # epoch 0 (numba compiling) uncounted
    assert seen[1] == ("UMAP, epoch 0 of 500", None, "epochs")


# ---- the job's message: rate and time left, in the UI and in `searchapp jobs` --------------
@pytest.mark.parametrize(("params", "step_units"), [
    (ClusterParams("community", projection="pca"), {2: "documents", 3: "documents"}),
    (ClusterParams("kmeans", k=4, projection="umap"), {2: "runs", 3: "epochs"}),
])
def test_job_shows_rate_and_time_left_while_clustering_and_drawing(app, monkeypatch, fake_umap,
                                                                    params, step_units):
    clock = iter(float(t) for t in range(1_000_000))  # a second between two reports
    monkeypatch.setattr(tasks, "time", SimpleNamespace(monotonic=lambda: next(clock)))
    monkeypatch.setattr(algorithms, "ROWS_PER_REPORT", 20)
    monkeypatch.setattr(projection, "CHUNK", 30)
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    _, job_id = request_clusters(app, "planted", params)
    seen: dict[int, list] = {}
    write = queue.progress

    def spy(db, lease, done, total, message=None):
        cancelled = write(db, lease, done, total, message)
        if split_message(message)[1]:
            seen.setdefault(done, []).append(queue.get(db, job_id))
        return cancelled

    monkeypatch.setattr(queue, "progress", spy)
    assert run_until_done(app, job_id).status == "succeeded"
    for step, unit in step_units.items():
        job = seen[step][-1]  # the job as the UI and the CLI read it during the step
        row = _job_row(job)
        assert re.fullmatch(rf"[\d,.]+ {unit}/s|\d+ s per {unit[:-1]}", row["rate"]), row
        assert re.fullmatch(r"\d+ (s|min)", row["left"]), row
        assert progress_text(job).startswith(f"Running · {step} of 6 (")
        assert progress_text(job).endswith(f"{row['rate']} · about {row['left']} left")


def test_each_new_phase_is_written_however_soon_it_follows_the_last(app, monkeypatch):
    monkeypatch.setattr(tasks, "time", SimpleNamespace(monotonic=lambda: 100.0))  # all at once
    job_id = queue.enqueue(app.db, "clusters", {"corpus": "c"})
    report = job_progress(TaskContext(app, queue.claim(app.db, "w:1").lease, "documents"))

    def shown() -> str:
        return queue.get(app.db, job_id).message

    report(1, STEPS, "Finding the 30 nearest neighbours: 500 of 900", items=(500, 900))
    report(1, STEPS, "Finding the 30 nearest neighbours: 600 of 900", items=(600, 900))
    assert shown() == "Finding the 30 nearest neighbours: 500 of 900"  # counts: throttled
    report(2, STEPS, "Clustering by k-means (k=4): 0 of 3 runs done", items=(0, 3), unit="runs")
    assert shown() == "Clustering by k-means (k=4): 0 of 3 runs done"
    report(3, STEPS, "Drawing the map: UMAP, weighing the neighbour graph")
    assert shown() == "Drawing the map: UMAP, weighing the neighbour graph"
    report(3, STEPS, "Drawing the map: UMAP, epoch 1 of 200", items=(1, 200), unit="epochs")
    assert shown() == "Drawing the map: UMAP, epoch 1 of 200"
