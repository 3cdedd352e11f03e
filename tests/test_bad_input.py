"""Bad input is one line naming what to fix (exit 1), never a traceback, and stores nothing.

One test (or a few) per class: ``finetune --column`` without ``=``; ``--out`` into a
folder that does not exist (every command that has ``--out``); a damaged model
folder in ``searchapp models``; documents changed while a clusters job runs;
corpus and model names that could become paths outside the data folder.
Everything runs the CLI's ``main`` in-process (no subprocess: fast).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from searchapp.cli import main
from searchapp.jobs import queue
from searchapp.store import repo
from tests.test_clusters import make_corpus, planted


def one_line_error(capsys) -> str:
    """The CLI's one ``error: ...`` line, checked to be its last word on stderr; returns it.

    Progress lines of a job may come before it; a traceback may not.
    """
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0], err
    assert "Traceback" not in err
    return errors[0]


@pytest.fixture
def planted_corpus(app):
    """A corpus of 121 documents in four planted topics, with vectors (no encoder)."""
    vectors, _, texts = planted()
    make_corpus(app, "planted", texts, vectors)
    return "planted"


# ---- finetune --column without '=' ------------------------------------------------------
@pytest.mark.parametrize("column", ["foo", "=question", "sentence1="])
def test_finetune_column_without_equals_is_one_line(app, tmp_path, capsys, column):
    train = tmp_path / "train.csv"
    train.write_text("q,a,sim\n" + "x,y,1\n" * 20)
    code = main(["finetune", "--train", str(train), "--name", "m1", "--column", column])
    assert code == 1
    assert "must be ROLE=COLUMN, e.g. --column sentence1=question" in one_line_error(capsys)
    assert queue.recent(app.db) == []  # nothing queued, no work folder
    assert not (app.settings.work_dir / "finetune" / "m1").exists()


# ---- --out into a missing folder ----------------------------------------------------------
@pytest.mark.parametrize("command", [
    ["clusters", "--corpus", "planted", "--method", "kmeans", "--k", "4", "--projection", "pca"],
    ["duplicates", "--corpus", "planted", "--threshold", "0.5"],
])
def test_out_into_a_missing_folder_fails_before_any_work(app, planted_corpus, tmp_path,
                                                         capsys, command):
    target = tmp_path / "no-such-folder" / "out.csv"
    assert main([*command, "--out", str(target)]) == 1
    err = one_line_error(capsys)
    assert f"the folder {target.parent} does not exist; create it first" in err
    assert queue.recent(app.db) == []  # checked before a job was queued
    assert not target.parent.exists()


def test_out_naming_a_folder_is_refused(app, planted_corpus, tmp_path, capsys):
    assert main(["clusters", "--corpus", "planted", "--method", "kmeans", "--k", "4",
                 "--projection", "pca", "--out", str(tmp_path)]) == 1
    assert "that is a folder; give a file name inside it" in one_line_error(capsys)


def test_a_failed_write_keeps_the_existing_file(app, planted_corpus, tmp_path, capsys,
                                                monkeypatch):
    """Disk full halfway through: the old CSV is still whole, no temporary file is left."""
    import searchapp.corpora.csv_safe

    out = tmp_path / "clusters.csv"
    out.write_text("id,cluster\nold,1\n")

    def disk_full(frame, path):
        Path(path).write_text("id,clus")  # half a file, then the disk is full
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(searchapp.corpora.csv_safe, "safe_csv", disk_full)
    assert main(["clusters", "--corpus", "planted", "--method", "kmeans", "--k", "4",
                 "--projection", "pca", "--out", str(out)]) == 1
    assert f"Cannot write {out}: No space left on device." in one_line_error(capsys)
    assert out.read_text() == "id,cluster\nold,1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clusters.csv", "data"]


# ---- a damaged model folder ---------------------------------------------------------------
def _model_folder(app, name: str, config: str, card: str | None = None):
    folder = app.settings.models_dir / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(config)
    if card is not None:
        (folder / "searchapp_model.json").write_text(card)
    return folder


def test_models_lists_a_damaged_folder_as_broken(app, capsys):
    good = json.dumps({"objective": "cosine", "metrics": {"after": {"spearman": 80.1}}})
    _model_folder(app, "good", '{"model_type": "bert"}', good)
    _model_folder(app, "bad-card", '{"model_type": "bert"}', '{"objective": "cos')  # cut off
    _model_folder(app, "list-card", '{"model_type": "bert"}', "[1, 2]")
    _model_folder(app, "bad-metrics", '{"model_type": "bert"}', '{"metrics": "high"}')
    _model_folder(app, "bad-config", "\x00\x01 not json")
    assert main(["models", "--json"]) == 0
    rows = {m["name"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    assert rows["good"]["status"] == "ok" and rows["good"]["metrics"] == "spearman=80.1"
    assert rows["all-MiniLM-L6-v2"]["status"] == "ok"
    for name, file in [("bad-card", "searchapp_model.json"), ("list-card", "searchapp_model.json"),
                       ("bad-metrics", "searchapp_model.json"), ("bad-config", "config.json")]:
        status = rows[name]["status"]
        assert status.startswith("broken: ") and file in status, (name, status)
        assert "fix or delete the file" in status
    assert main(["models"]) == 0  # the table too
    table = capsys.readouterr().out
    assert "broken: " in table and "good" in table


def test_a_damaged_card_is_a_clear_error_where_it_is_read(app):
    from searchapp.embedding.models import read_card
    from searchapp.errors import ModelCardError, SearchAppError

    folder = _model_folder(app, "bad-card", "{}", "{oops")
    with pytest.raises(ModelCardError, match=r"searchapp_model\.json is unreadable") as caught:
        read_card(folder)
    assert isinstance(caught.value, SearchAppError)


# ---- documents changed while a clusters job runs ---------------------------------------------
def _remove_and_change(app, corpus: str) -> None:
    """What another user does meanwhile: 20 documents deleted, 10 get a new text."""
    from searchapp.store.changes import next_generation
    from searchapp.store.documents import remove_documents
    from searchapp.store.repo import NewDocument

    with app.db.session() as s:
        c = repo.get_corpus(s, corpus)
        ids = sorted(repo.document_texts(s, c.id))
        remove_documents(s, c.id, ids[:20], next_generation(s, c.id))
        repo.add_documents(s, c, [NewDocument(f"d{i}", f"changed {i}") for i in range(20, 30)])


def _change_during_graph(app, corpus: str):
    """A progress callback that changes the corpus during the k-NN step, then opens it.

    Opening the corpus in this process (as a page or a second thread would)
    catches the cached index up to the new version.
    """
    from searchapp.vectors.handle import open_corpus

    done = []

    def progress(step, total, message, items=None, unit=None):
        if step == 1 and not done:
            done.append(step)
            _remove_and_change(app, corpus)
            open_corpus(app, corpus)

    return progress


def test_clusters_job_skips_documents_changed_meanwhile(app, planted_corpus):
    """The job clusters the corpus as it was when it started: nothing raises."""
    from searchapp.clusters import ClusterParams, cached_clusters, request_clusters
    from searchapp.clusters.service import clusters_task
    from searchapp.jobs.kinds import parse_payload
    from searchapp.jobs.tasks import TaskContext

    params = ClusterParams("community", projection="pca")
    _, job_id = request_clusters(app, planted_corpus, params)
    lease = queue.claim(app.db, "test").lease
    assert lease.job_id == job_id
    change = _change_during_graph(app, planted_corpus)

    class Context(TaskContext):
        def progress(self, done, total, message=None, force=False, items=None, unit=None):
            change(done, total, message)

    result = clusters_task(Context(app, lease),
                           parse_payload("clusters", queue.get(app.db, job_id).payload))
    assert result["documents"] == 121 and result["clusters"] >= 4  # the planted topics
    assert cached_clusters(app, planted_corpus, params) is None  # never shown as current
    fresh, _ = request_clusters(app, planted_corpus, params)
    assert fresh is None  # a new job is asked for the corpus as it is now


def test_clusters_on_a_shared_index_changed_midway_is_a_clear_error(app, planted_corpus):
    """Not a job (the index is shared with the process): refused, nothing stored."""
    from searchapp.clusters import ClusterParams, compute_and_store
    from searchapp.errors import CorpusChangedError

    with pytest.raises(CorpusChangedError, match="Corpus 'planted' changed while its clusters"):
        compute_and_store(app, planted_corpus, ClusterParams("community", projection="pca"),
                          _change_during_graph(app, planted_corpus))
    with app.db.session() as s:
        assert repo.get_analysis(s, repo.get_corpus(s, planted_corpus).id,
                                 app.model_ref("all-MiniLM-L6-v2").id, "clusters",
                                 ClusterParams("community", projection="pca").validated().key()
                                 ) is None


# ---- names that could become paths ----------------------------------------------------------
BAD_NAMES = ["../evil", "a/b", "a\\b", "..", "x..y", ".hidden", "nul\x00byte", "new\nline",
             "/abs"]


def _outside(tmp_path) -> set[str]:
    """What there is beside the data folder (nothing may appear there)."""
    return {p.name for p in tmp_path.parent.iterdir()} | {p.name for p in tmp_path.iterdir()}


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_corpus_names_are_refused(app, tmp_path, capsys, name):
    upload = tmp_path / "docs.csv"
    upload.write_text("text\nhello\nworld\n")
    before = _outside(tmp_path)
    assert main(["ingest", str(upload), "--corpus", name]) == 1
    err = one_line_error(capsys)
    assert "Invalid corpus name" in err
    assert "use 1-200 letters, digits, spaces and . _ - ( ) +, starting with a letter" in err
    with app.db.session() as s:
        assert repo.corpus_names(s) == []  # nothing stored
    assert queue.recent(app.db) == []
    assert _outside(tmp_path) == before


@pytest.mark.parametrize("name", [*BAD_NAMES, "trailing\n", "space name"])
def test_bad_model_names_are_refused(app, tmp_path, capsys, name):
    train = tmp_path / "train.csv"
    train.write_text("sentence1,sentence2,score\n" + "a,b,1\nc,d,2\n" * 20)
    before = _outside(tmp_path)
    assert main(["finetune", "--train", str(train), "--name", name]) == 1
    err = one_line_error(capsys)
    assert "Invalid model name" in err
    assert "use 1-100 ASCII letters, digits, '.', '_' or '-', starting with a letter" in err
    assert queue.recent(app.db) == []
    assert _outside(tmp_path) == before
    work = app.settings.work_dir / "finetune"
    assert not work.exists() or list(work.iterdir()) == []


def test_good_names_still_work(app, tmp_path, capsys):
    from searchapp.corpora.service import validate_corpus_name
    from searchapp.embedding.models import validate_name

    assert validate_corpus_name("  Support tickets (2024) ") == "Support tickets (2024)"
    assert validate_corpus_name("Fragen über Käse") == "Fragen über Käse"
    assert validate_name("minilm-stsb_v1.2") == "minilm-stsb_v1.2"
    upload = tmp_path / "docs.csv"
    upload.write_text("text\nhello\n")
    assert main(["ingest", str(upload), "--corpus", "Support tickets (2024)"]) == 0
    with app.db.session() as s:
        assert repo.corpus_names(s) == ["Support tickets (2024)"]
    capsys.readouterr()


def test_a_corpus_stored_before_the_rule_still_takes_uploads(app, tmp_path, capsys):
    with app.db.session() as s:  # written directly, as an older version allowed
        repo.get_or_create_corpus(s, "old/name", "all-MiniLM-L6-v2")
    upload = tmp_path / "docs.csv"
    upload.write_text("text\nhello\n")
    assert main(["ingest", str(upload), "--corpus", "old/name"]) == 0
    with app.db.session() as s:
        assert repo.corpus_state(s, "old/name").documents == 1
    np.testing.assert_equal(len(queue.recent(app.db)), 1)
    capsys.readouterr()
