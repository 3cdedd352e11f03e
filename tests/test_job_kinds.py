"""Job kinds: each declared once, with its unit and payload dataclass; a payload that does not
fit its kind's dataclass is refused before anything runs; what the request side writes, the
worker reads (real SQLite queue, real worker, real request functions)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.jobs import kinds, queue
from searchapp.jobs.worker import run_job
from searchapp.store import repo
from tests.learning_data import make_learning_corpus

REPO = Path(__file__).resolve().parents[1]
JSON_SCALARS = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=8) \
    | st.floats(allow_nan=False, allow_infinity=False)


# ---- a payload that does not fit is refused, and nothing runs ------------------------------
@pytest.fixture
def notes(tmp_path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nThe first note.\n", encoding="utf-8")
    return folder


def _ingest_payload(app, folder: Path) -> dict:
    """An ingest payload as ``request_ingest`` writes it, embedding left to a later job."""
    return {"corpus": "notes", "paths": [str(folder)], "sync": False,
            "model": app.settings.model, "staged": None, "overlap": False}


@pytest.mark.parametrize(("change", "field", "says"), [
    (lambda p: p.update(sycn=True), "sycn", "unknown field"),
    (lambda p: p.update(sync="no"), "sync", "where a bool was expected"),
    (lambda p: p.update(paths=[3]), "paths", "where a list[str] was expected"),
    (lambda p: p.pop("model"), "model", "lacks the required field"),
], ids=["unknown-key", "wrong-type", "wrong-item-type", "missing-field"])
def test_a_payload_that_does_not_fit_its_kind_fails_the_job_and_nothing_runs(
        app, notes, change, field, says):
    payload = _ingest_payload(app, notes)
    change(payload)
    job_id = queue.enqueue(app.db, "ingest", payload)  # as another version or a hand would
    assert run_job(app, queue.claim(app.db, "test")) == "failed"
    error = queue.get(app.db, job_id).error
    assert error.startswith("The ingest job's payload") and says in error, error
    assert repr(field) in error and "start the job again" in error
    with app.db.session() as s:
        assert repo.find_corpus(s, "notes") is None  # the ingest never started: no corpus


def test_the_same_payload_fitting_its_kind_runs(app, notes):
    """The counterpart of the refusals above: the unchanged payload is read and stored."""
    job_id = queue.enqueue(app.db, "ingest", _ingest_payload(app, notes))
    assert run_job(app, queue.claim(app.db, "test", kinds=("ingest",))) == "succeeded"
    assert queue.get(app.db, job_id).result["added"] == 1


def test_an_unknown_kind_fails_listing_the_declared_ones(app):
    job_id = queue.enqueue(app.db, "embedd", {"corpus": "faq"})
    assert run_job(app, queue.claim(app.db, "test")) == "failed"
    error = queue.get(app.db, job_id).error
    assert "Unknown job kind 'embedd'" in error
    assert all(k.name in error for k in kinds.kinds())


# ---- every declared payload round-trips -----------------------------------------------------
def _strategy(hint: Any) -> st.SearchStrategy:
    """Values of a payload field's type, as JSON can hold them."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return JSON_SCALARS
    if origin in (typing.Union, types.UnionType):
        return st.one_of([_strategy(a) for a in args])
    simple = {type(None): st.none(), bool: st.booleans(), int: st.integers(-10**9, 10**9),
              float: st.floats(allow_nan=False, allow_infinity=False), str: st.text(max_size=12)}
    if hint in simple:
        return simple[hint]
    if hint is list or origin is list:
        return st.lists(_strategy(args[0]) if args else JSON_SCALARS, max_size=3)
    if hint is dict or origin is dict:
        keys, values = (_strategy(args[0]), _strategy(args[1])) if args else \
            (st.text(max_size=6), JSON_SCALARS)
        return st.dictionaries(keys, values, max_size=3)
    raise AssertionError(f"no strategy for {hint!r}")


def _instances(payload: type) -> st.SearchStrategy:
    hints = typing.get_type_hints(payload)
    return st.builds(payload, **{f.name: _strategy(hints[f.name])
                                 for f in dataclasses.fields(payload)})


def _all_payloads() -> st.SearchStrategy:
    return st.one_of([st.tuples(st.just(k), _instances(k.payload)) for k in kinds.kinds()])


@settings(max_examples=300, deadline=None)
@given(_all_payloads())
def test_every_declared_payload_round_trips_through_the_queue(kind_and_payload):
    kind, payload = kind_and_payload
    stored = json.loads(json.dumps(kinds.payload_dict(payload)))  # as the queue keeps it
    assert kinds.parse_payload(kind, stored) == payload


@pytest.mark.parametrize("kind", [k.name for k in kinds.kinds()])
def test_every_field_of_every_kind_refuses_a_value_of_another_type(kind):
    """An object where a field holds no dict, a list of numbers where it holds no list of
    numbers: refused, the field named."""
    job_kind = kinds.kind(kind)
    hints = typing.get_type_hints(job_kind.payload)
    required = {f.name: _example(hints[f.name]) for f in dataclasses.fields(job_kind.payload)
                if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING}
    for field in dataclasses.fields(job_kind.payload):
        wrong = [1.5] if "dict" in str(hints[field.name]) else {"unexpected": [1]}
        with pytest.raises(kinds.JobError, match=f"'{field.name}' = "):
            kinds.parse_payload(job_kind, {**required, field.name: wrong})


def _example(hint: Any) -> Any:
    """A value of the type ``hint`` (the first member of a union)."""
    hint = typing.get_args(hint)[0] if typing.get_origin(hint) is not None and \
        typing.get_origin(hint) not in (list, dict) else hint
    return {str: "x", int: 1, float: 1.0, bool: True}.get(hint, [] if hint is list or
                                                          typing.get_origin(hint) is list else {})


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_all_payloads(), st.text(min_size=1, max_size=12))
def test_an_unknown_key_is_refused_whatever_its_name(kind_and_payload, key):
    kind, payload = kind_and_payload
    stored = kinds.payload_dict(payload)
    if any(f.name == key for f in dataclasses.fields(payload)):
        return
    with pytest.raises(kinds.JobError, match="unknown field"):
        kinds.parse_payload(kind, {**stored, key: 1})


# ---- what the request side writes, the kind reads ---------------------------------------------
@pytest.fixture
def tiny(app, tiny_bert):
    shutil.copytree(tiny_bert, app.settings.models_dir / "tiny")
    return "tiny"


def test_every_request_writes_a_payload_its_kind_reads(app, tiny, notes, tmp_path):
    from searchapp.backups.service import request_backup
    from searchapp.clusters import ClusterParams, request_clusters
    from searchapp.duplicates.calibration import request_calibration
    from searchapp.duplicates.service import request_mining
    from searchapp.evaluation.fusion_fit import request_fusion_fit
    from searchapp.evaluation.service import request_evaluation
    from searchapp.intake.files_job import request_ingest
    from searchapp.training.adapt_job import request_adaptation
    from searchapp.training.learn_job import request_learning
    from searchapp.training.reranker_job import request_reranker
    from searchapp.training.task import request_finetune

    make_learning_corpus(app, model=tiny)
    request_backup(app)
    request_ingest(app, "notes", [notes], model=tiny)
    request_ingest(app, "inbox", [notes], sync=True, model=tiny,
                   options={"watch": 3, "include": ["*.md"], "exclude": [], "settle": 1.5,
                            "device": "2049:77", "roots": [str(tmp_path)]})
    request_fusion_fit(app, "topics")
    request_evaluation(app, "topics")
    request_learning(app, "topics", name="learned", augment="off", max_steps=4)
    request_adaptation(app, "topics", name="adapted", max_steps=4)
    request_reranker(app, "topics", max_steps=4)
    request_mining(app, "topics", 0.9, 5)
    request_clusters(app, "topics", ClusterParams("kmeans", k=3, projection="pca"))
    pairs = "sentence1,sentence2,label\n" + "".join(
        f"the {i} cat,a {i} cat,1\nthe {i} dog,a car {i},0\n" for i in range(8))
    request_calibration(app, tiny, pairs.encode(), "pairs.csv")
    train = "sentence1,sentence2,score\n" + "".join(
        f"a dog runs {i},the dog runs {i},{i % 3 * 2.5}\n" for i in range(32))
    request_finetune(app, train.encode(), train_filename="t.csv", name="tuned", base=tiny,
                     max_steps=2)
    jobs = queue.recent(app.db, 100)
    assert {j.kind for j in jobs} >= {"backup", "ingest", "fit-fusion", "evaluate", "learn",
                                     "adapt", "rerank", "duplicates", "clusters", "calibrate",
                                     "finetune"}
    for job in jobs:
        assert kinds.payload_dict(kinds.parse_payload(job.kind, job.payload)) == job.payload


def test_an_embed_requests_payloads_read_back_as_written(app, tiny):
    """The local, the Ray and the model-switch embed jobs: each payload reads back as it was
    written (a Ray job is only queued here: no Ray is needed)."""
    from searchapp.corpora.service import request_model_switch, request_ray_embed
    from searchapp.intake.ingest import read_table
    from searchapp.intake.table_upload import upload

    csv = "id,text\n" + "".join(f"d{i},text number {i}\n" for i in range(5))
    local = upload(app, read_table(csv.encode(), "d.csv"), "docs", model=tiny).job_id
    ray = request_ray_embed(app, "docs", address=None, actors=2)
    queue.cancel(app.db, ray)
    switch = request_model_switch(app, "docs", "all-MiniLM-L6-v2")
    written = {job_id: queue.get(app.db, job_id).payload for job_id in (local, ray, switch)}
    assert written[ray] == {"corpus": "docs", "engine": "ray", "address": None, "actors": 2}
    assert written[switch] == {"corpus": "docs", "model": "all-MiniLM-L6-v2", "switch": True}
    for payload in written.values():
        assert kinds.payload_dict(kinds.parse_payload("embed", payload)) == payload


# ---- units, and where the kinds are found ---------------------------------------------------
def test_the_worker_counts_in_the_unit_declared_with_the_kind(app, monkeypatch):
    seen = []

    @dataclasses.dataclass
    class Count:
        n: int

    def count(ctx, payload: Count) -> dict:
        seen.append((ctx.unit, payload))
        return {}

    monkeypatch.setitem(kinds.DECLARED, "count", kinds.JobKind("count", "widgets", Count, count))
    queue.enqueue(app.db, "count", {"n": 3})
    assert run_job(app, queue.claim(app.db, "test")) == "succeeded"
    assert seen == [("widgets", Count(3))]
    assert all(k.unit and k.unit != "items" for k in kinds.kinds())


def test_each_services_declarations_are_found_without_a_list(tmp_path):
    """A fresh process finds every kind the ``job_kinds`` modules declare, loading no
    task module and no model library on the way."""
    declared = sorted(p.parent.name for p in (REPO / "searchapp").glob("*/job_kinds.py"))
    script = ("import sys, json; from searchapp.jobs import kinds; "
              "found = {k.name: k.run.__module__ for k in kinds.kinds()}; "
              "heavy = [m for m in ('torch', 'searchapp.training.learn_job', "
              "'searchapp.training.adapt_job', 'searchapp.intake.files_job') "
              "if m in sys.modules]; "
              "print(json.dumps([found, heavy]))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=REPO, check=True, timeout=120).stdout
    found, heavy = json.loads(out)
    assert heavy == []
    assert sorted({module.split(".")[1] for module in found.values()}) == declared
    assert len(found) == 13  # saved-check: searchapp.saved


def test_a_payload_dataclass_names_one_kind_and_submit_finds_it(app):
    """``submit`` queues the kind whose payload a request built; a second kind with the
    same dataclass is refused (it would make that lookup ambiguous)."""
    from searchapp.backups.job_payloads import BackupPayload

    job_id = kinds.submit(app.db, BackupPayload(name="2026-01-01T00-00-00"))
    assert queue.get(app.db, job_id).kind == "backup"
    with pytest.raises(ValueError, match="already 'backup'"):
        kinds.declare("backup-twin", unit="steps", payload=BackupPayload, run=lambda c, p: {})
    assert "backup-twin" not in kinds.DECLARED
