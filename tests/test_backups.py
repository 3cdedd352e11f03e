"""Backups that restore: a copy at one moment while an ingest runs, restored into a new
folder with the same search results; damaged, altered, foreign or newer archives refused.
"""

from __future__ import annotations

import io
import json
import subprocess
import tarfile
import threading
from pathlib import Path

import pytest

from searchapp.backups import service as backups
from searchapp.cli.main import main
from searchapp.config import Settings
from searchapp.context import App
from searchapp.corpora import documents as docs
from searchapp.corpora.service import create_corpus
from searchapp.errors import BackupError
from searchapp.jobs.worker import work
from searchapp.search.service import hit_json, search
from searchapp.store import archive, fulltext, repo
from searchapp.store.schema import SCHEMA_VERSION

QUERIES = ["a dog running on a beach", "people cooking dinner", "a red car on the street"]
TEXTS = ["A dog runs along the beach.", "Two people cook dinner in a small kitchen.",
         "A red car is parked on a busy street.", "A child plays football in the park.",
         "An old man reads a newspaper on a bench.", "A cat sleeps on the sofa.",
         "Heavy rain floods the city streets.", "A chef slices vegetables."]


@pytest.fixture
def source(app, bundled_encoder):
    """The App with corpus 'caps' embedded (the searches) and an empty corpus 'stream'."""
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    create_corpus(app, "caps")
    docs.upsert(app, "caps", [docs.Doc(f"c{i}", t, {"n": i}) for i, t in enumerate(TEXTS)])
    work(app, stop_when_idle=True)
    create_corpus(app, "stream")
    model = app.settings.models_dir / "my-model"
    model.mkdir(parents=True)
    (model / "config.json").write_text('{"hidden_size": 384}')
    return app


def restored_app(folder: Path, encoder) -> App:
    app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(folder)}))
    app.install_encoder("all-MiniLM-L6-v2", encoder)
    return app


def stream_words(app: App, word: str) -> list[str]:
    """The 'stream' documents the full-text index finds for ``word`` (it is not embedded)."""
    with app.db.session() as s:
        corpus = repo.corpus_state(s, "stream")
    with app.db.reader() as conn:
        ids = [i for i, _ in fulltext.lexical_search(conn, corpus.id, word, 100)]
    with app.db.session() as s:
        return sorted(d.external_id for d in repo.documents_by_id(s, ids).values())


def test_a_backup_during_an_ingest_restores_one_moment_with_the_same_searches(
        source, tmp_path, bundled_encoder):
    committed: list[tuple[int, int]] = []  # (generation, batches stored) after each batch
    stop = threading.Event()

    def ingest() -> None:  # another writer adds batches of 50 while the backup runs
        batch = 0
        while not stop.is_set() and batch < 400:
            done = docs.upsert(source, "stream", [
                docs.Doc(f"b{batch}-{i}", f"marker{batch} text {i}") for i in range(50)])
            batch += 1
            committed.append((done.generation, batch))

    writer = threading.Thread(target=ingest)
    writer.start()
    while len(committed) < 5:  # the ingest is under way
        threading.Event().wait(0.05)
    made = backups.backup(source, tmp_path / "during.tar")
    stop.set()
    writer.join()
    stream = {c["name"]: c for c in made.manifest["corpora"]}["stream"]
    batches = dict(committed)[stream["generation"]]  # the copy is at a committed generation
    assert stream["documents"] == 50 * batches

    assert len(committed) > batches  # the ingest went on after the copy

    restored = backups.restore(made.path, tmp_path / "restored")
    assert not any((restored.data_dir / "indexes").iterdir())  # rebuilt at the first search
    app = restored_app(restored.data_dir, bundled_encoder)
    state = docs.get_many(app, "stream", [f"b{batches - 1}-0", f"b{batches}-0"])
    assert [d.id for d in state[0]] == [f"b{batches - 1}-0"]  # the last batch in, none after
    # the source brought back to the backed-up moment: the batches after it deleted
    later = [f"b{b}-{i}" for b in range(batches, len(committed)) for i in range(50)]
    for part in range(0, len(later), 1000):
        docs.delete(source, "stream", later[part:part + 1000])
    for query in QUERIES:  # every mode: BM25's statistics span the whole database
        for mode in ("hybrid", "semantic", "lexical"):
            assert [hit_json(h) for h in search(app, "caps", query, k=5, mode=mode)] == \
                   [hit_json(h) for h in search(source, "caps", query, k=5, mode=mode)]
    marker = f"marker{batches - 1}"
    assert len(stream_words(app, marker)) == 50
    assert stream_words(app, marker) == stream_words(source, marker)
    assert (restored.data_dir / "models" / "my-model" / "config.json").is_file()
    app.db.dispose()


def test_restore_refuses_a_non_empty_folder_without_force_and_keeps_it_with_force(
        source, tmp_path):
    made = backups.backup(source, tmp_path / "b.tar")
    target = tmp_path / "target"
    target.mkdir()
    (target / "precious.txt").write_text("keep me")
    with pytest.raises(BackupError, match=r"not empty.*--force"):
        backups.restore(made.path, target)
    assert (target / "precious.txt").read_text() == "keep me"
    done = backups.restore(made.path, target, force=True)
    assert (done.replaced / "precious.txt").read_text() == "keep me"
    assert (target / "searchapp.db").is_file()


def test_restore_refuses_a_folder_whose_worker_runs_and_not_one_whose_pid_file_is_stale(
        source, tmp_path):
    from searchapp.jobs.worker import hold_worker_lock

    made = backups.backup(source, tmp_path / "b.tar")
    target = tmp_path / "target"
    target.mkdir()
    sleeper = subprocess.Popen(["sleep", "60"])  # a live process that is no worker
    try:
        (target / "worker.pid").write_text(str(sleeper.pid))
        assert backups.restore(made.path, target, force=True).data_dir == target
    finally:
        sleeper.kill()
        sleeper.wait()
    lock = hold_worker_lock(target, wait=0)  # this process is now target's worker
    try:
        with pytest.raises(BackupError, match="is using"):
            backups.restore(made.path, target, force=True)
    finally:
        lock.close()


def rewrite(path: Path, dest: Path, change) -> Path:
    """A copy of an archive with ``change(name, data) -> data | None`` applied per member."""
    with tarfile.open(path) as src, tarfile.open(dest, "w") as out:
        for member in src:
            data = change(member.name, src.extractfile(member).read())
            if data is None:
                continue
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))
    return dest


def test_damaged_altered_foreign_and_newer_archives_are_refused(source, tmp_path):
    made = backups.backup(source, tmp_path / "b.tar")
    raw = made.path.read_bytes()
    cases = {}
    (tmp_path / "truncated.tar").write_bytes(raw[: len(raw) // 2])
    cases["truncated.tar"] = "damaged|lacks"
    flipped = bytearray(raw)
    flipped[len(raw) // 3] ^= 0xFF  # one byte inside the database member
    (tmp_path / "flipped.tar").write_bytes(bytes(flipped))
    cases["flipped.tar"] = "does not match its checksum|damaged"

    def altered(name, data):
        return data + b"x" if name.startswith("models/") else data

    rewrite(made.path, tmp_path / "altered.tar", altered)
    cases["altered.tar"] = "does not match its checksum|claims 21 bytes, its manifest 20"

    def extra(name, data):
        return data

    rewrite(made.path, tmp_path / "extra.tar", extra)
    with tarfile.open(tmp_path / "extra.tar", "a") as tar:
        info = tarfile.TarInfo("models/evil.bin")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    cases["extra.tar"] = "not in the manifest"

    def newer(name, data):
        if name != archive.MANIFEST:
            return data
        manifest = json.loads(data)
        manifest["schema_version"] = SCHEMA_VERSION + 1
        return json.dumps(manifest).encode()

    rewrite(made.path, tmp_path / "newer.tar", newer)
    cases["newer.tar"] = "newer than this searchapp"
    with tarfile.open(tmp_path / "foreign.tar", "w") as tar:
        tar.add(made.path, arcname="something.tar")
    cases["foreign.tar"] = "not a searchapp backup"
    (tmp_path / "notatar.tar").write_text("hello")
    cases["notatar.tar"] = "damaged|not a searchapp backup"

    def missing(name, data):
        return None if name.startswith("models/") else data

    rewrite(made.path, tmp_path / "missing.tar", missing)
    cases["missing.tar"] = "lacks models/"
    for name, message in cases.items():
        target = tmp_path / f"into-{name}"
        with pytest.raises(BackupError, match=message):
            backups.restore(tmp_path / name, target)
        assert not target.exists(), name  # nothing was written
        assert not list(tmp_path.glob(f".into-{name}.restoring-*")), name


def test_the_cli_backs_up_checks_and_restores(source, tmp_path, capsys):
    assert main(["backup", "--out", str(tmp_path / "cli.tar")]) == 0
    assert "Backed up 2 corpora (8 documents) and 1 model file" in capsys.readouterr().out
    assert main(["restore", str(tmp_path / "cli.tar"), "--check"]) == 0
    assert "intact" in capsys.readouterr().out
    assert main(["restore", str(tmp_path / "cli.tar"), "--data-dir", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "caps: 8 documents" in out and "SEARCHAPP_DATA_DIR=" in out
    (tmp_path / "cli.tar").write_bytes((tmp_path / "cli.tar").read_bytes()[:5000])
    assert main(["restore", str(tmp_path / "cli.tar"), "--data-dir", str(tmp_path / "r2")]) == 1
    assert capsys.readouterr().err.startswith("error: cli.tar is damaged")


def test_a_postgresql_database_is_backed_up_with_pg_dump_and_restored_with_pg_restore(
        postgres_server, postgres_url, tmp_path):
    source = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp_path / "src"),
                                    "SEARCHAPP_DATABASE_URL": postgres_url}))
    create_corpus(source, "faq")
    docs.upsert(source, "faq", [docs.Doc(f"q{i}", f"question {i}", {"n": i}) for i in range(20)])
    made = backups.backup(source, tmp_path / "pg.tar")
    assert "database/searchapp.pgdump" in made.manifest["members"]
    assert made.manifest["corpora"][0]["documents"] == 20
    with pytest.raises(BackupError, match="--database-url"):
        backups.restore(made.path, tmp_path / "nowhere")
    target = postgres_server.create_database()
    done = backups.restore(made.path, tmp_path / "restored", database_url=target)
    copy = App(Settings.from_env({"SEARCHAPP_DATA_DIR": str(done.data_dir),
                                  "SEARCHAPP_DATABASE_URL": target}))
    found, missing = docs.get_many(copy, "faq", [f"q{i}" for i in range(20)])
    assert missing == [] and [d.meta["n"] for d in found] == list(range(20))
    source.db.dispose()
    copy.db.dispose()
