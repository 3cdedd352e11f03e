"""``kill -9`` a worker at seeded points of a learning job (every step: mining, training,
the cross-encoder, silver labelling, the second training, the choice, the verdict); the
next worker resumes and the job ends exactly as an uninterrupted one.

The machinery (worker processes from a fork server that SIGKILL themselves at the Nth
fault point, the tally) is ``tests/test_faults.py``'s; the scenario is the ``learn`` job
with Augmented SBERT on, so that every step is in the path of the kills.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from searchapp.context import App
from searchapp.jobs import queue
from searchapp.training.learn_job import request_learning
from tests.learning_data import make_learning_corpus
from tests.test_faults import PROBE, _fork_server, run_trials, worker_env

FAST = {"max_steps": 6, "batch_size": 8, "checkpoint_every": 2}
TIMINGS = {"seconds", "seconds_per_step", "resumed_from"}


def untimed(value):
    """``value`` without the keys that say how long something took or where it resumed."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


class Learn:
    """``learn`` jobs on the corpus ``topics``, a new model name each."""

    kind = "learn"

    def enqueue(self, app: App, round_: int) -> int:
        return request_learning(app, "topics", name=f"learned-{round_}", augment="on",
                                **FAST).job_id

    def points_left(self, app: App, job_id: int, full: int, runs) -> int:
        """An upper bound: the points of a whole run (a kill drawn past a resumed run's
        end is no kill, and that run finishes the job)."""
        return full

    def outcome(self, app: App, job_id: int) -> tuple[np.ndarray, str]:
        from searchapp.embedding.encoder import SiameseEncoder

        result = queue.get(app.db, job_id).result
        model = SiameseEncoder.load(result["path"], device="cpu", precision="fp32")
        # the verdict and the threshold, without the model's own name and the timings
        numbers = json.dumps(untimed({k: result[k] for k in (
            "verdict", "comparison", "threshold", "augmentation", "negatives")}),
            sort_keys=True).replace(result["model"], "MODEL")
        return model.encode(PROBE), numbers

    def check(self, app: App, job_id: int, reference, runs) -> None:
        vectors, numbers = self.outcome(app, job_id)
        np.testing.assert_allclose(vectors, reference[0], atol=1e-5)
        assert numbers == reference[1]


@pytest.fixture(scope="module")
def fork_server():
    return _fork_server()


def prepare(app: App, tiny_bert) -> None:
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    make_learning_corpus(app, model="tiny")


def test_a_learning_job_killed_twice_ends_as_an_uninterrupted_one(app, tiny_bert, fork_server,
                                                                 tmp_path):
    prepare(app, tiny_bert)
    env = worker_env(app.settings.data_dir)
    tally = run_trials(app, Learn(), 2, 2, fork_server, env, tmp_path / "logs")
    assert tally.kills == 2 and tally.jobs <= 2  # every job checked against the reference


@pytest.mark.slow
def test_a_learning_job_killed_12_times_loses_nothing(app, tiny_bert, fork_server, tmp_path):
    prepare(app, tiny_bert)
    env = worker_env(app.settings.data_dir)
    tally = run_trials(app, Learn(), 12, 4, fork_server, env, tmp_path / "logs")
    assert tally.kills >= 12
