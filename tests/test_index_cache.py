"""IndexCache: an index at the corpus generation, caught up by what changed, files distrusted."""

from __future__ import annotations

import shutil
import sqlite3

import numpy as np
import pytest

from searchapp.context import App
from searchapp.store import repo
from searchapp.vectors.index_cache import IndexCache, IndexKey

DIM = 8
MODEL = "all-MiniLM-L6-v2"  # only its row is used here; vectors are random


class Model:
    def __init__(self, id_: int, dimension: int = DIM, name: str = "fake"):
        self.id, self.dimension, self.name = id_, dimension, name


def unit(rng, n):
    x = rng.normal(size=(n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def fill(app: App, name: str, texts: dict[str, str], rng) -> tuple[int, Model]:
    """Store documents and random vectors for those without one; returns (corpus id, model)."""
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, MODEL)
        repo.add_documents(s, corpus, [repo.NewDocument(k, v) for k, v in texts.items()])
        model = repo.get_or_create_model(s, "fake", DIM)
        rows = repo.documents_missing_embedding(s, corpus.id, model.id, 0, 10_000)
        if rows:
            repo.save_embeddings(s, corpus.id, model.id, [i for i, _ in rows],
                                 unit(rng, len(rows)))
        return corpus.id, Model(model.id)


def database_view(app: App, corpus_id: int, model: Model) -> dict[int, np.ndarray]:
    with app.db.session() as s:
        parts = list(repo.embeddings_since(s, corpus_id, model.id, 0, DIM))
    return {int(i): v for ids, vectors in parts for i, v in zip(ids, vectors, strict=True)}


def assert_same(index, expected: dict[int, np.ndarray]) -> None:
    labels = index.labels()
    assert labels.tolist() == sorted(expected)
    np.testing.assert_allclose(index.vectors(labels), np.stack([expected[i] for i in labels]),
                               atol=1e-6)


@pytest.fixture
def streamed(monkeypatch):
    """Counts the vectors the cache reads from the database (wrapping, not replacing)."""
    counter = {"rows": 0}
    real = repo.embeddings_since

    def counting(*args, **kwargs):
        for ids, vectors in real(*args, **kwargs):
            counter["rows"] += len(ids)
            yield ids, vectors

    monkeypatch.setattr(repo, "embeddings_since", counting)
    return counter


def test_a_changed_corpus_is_caught_up_by_its_changes_only(app, streamed):
    rng = np.random.default_rng(0)
    cid, model = fill(app, "c", {f"d{i}": f"text {i}" for i in range(200)}, rng)
    index, generation = app.indexes.get(cid, model)
    assert streamed["rows"] == 200 and index.count == 200
    fill(app, "c", {"d5": "a new text for d5", "new": "another document"}, rng)
    index, later = app.indexes.get(cid, model)
    assert later > generation
    assert streamed["rows"] == 202  # the two new vectors, not the corpus again
    again, _ = app.indexes.get(cid, model, later)
    assert again is index and streamed["rows"] == 202  # current: nothing read at all
    assert_same(index, database_view(app, cid, model))


def test_a_saved_file_is_used_and_brought_forward_in_a_new_process(app, streamed):
    rng = np.random.default_rng(1)
    cid, model = fill(app, "c", {f"d{i}": f"t{i}" for i in range(50)}, rng)
    app.indexes.get(cid, model)
    app.indexes.save(cid, model)
    fill(app, "c", {"late": "written after the save"}, rng)
    fresh = IndexCache(app.db, app.settings.index_dir)  # as another process would
    before = streamed["rows"]
    index, _ = fresh.get(cid, model)
    assert streamed["rows"] - before == 1
    assert_same(index, database_view(app, cid, model))


def damage_truncate(path, other):
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def damage_zero(path, other):
    path.write_bytes(b"\0" * path.stat().st_size)


def damage_delete(path, other):
    path.unlink()


def damage_foreign(path, other):
    shutil.copy(other, path)
    shutil.copy(other.with_suffix(".json"), path.with_suffix(".json"))


def damage_foreign_index_only(path, other):
    """Another corpus' index over this one's, this one's metadata kept (sizes differ here)."""
    shutil.copy(other, path)


def damage_meta_deleted(path, other):
    path.with_suffix(".json").unlink()


def damage_tail_zeroed(path, other):
    """What a crash can leave of a file not yet flushed: its size, and zeros at the end."""
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[: size // 2] + b"\0" * (size - size // 2))


def damage_block_zeroed(path, other):
    """4 KiB of zeros in the middle of the file, its size unchanged."""
    data = bytearray(path.read_bytes())
    start = int(len(data) * 0.3)
    data[start:start + 4096] = bytes(len(data[start:start + 4096]))
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [
    damage_truncate, damage_zero, damage_delete, damage_foreign, damage_foreign_index_only,
    damage_meta_deleted, damage_tail_zeroed, damage_block_zeroed,
])
def test_a_damaged_or_foreign_file_is_rebuilt_never_served(app, damage):
    rng = np.random.default_rng(2)
    cid, model = fill(app, "c", {f"d{i}": f"t{i}" for i in range(40)}, rng)
    other_id, _ = fill(app, "other", {f"o{i}": f"o{i}" for i in range(30)}, rng)
    for corpus_id in (cid, other_id):
        app.indexes.get(corpus_id, model)
        app.indexes.save(corpus_id, model)
    damage(app.indexes.path(IndexKey(cid, model.id)),
           app.indexes.path(IndexKey(other_id, model.id)))
    index, _ = IndexCache(app.db, app.settings.index_dir).get(cid, model)
    assert_same(index, database_view(app, cid, model))


def test_another_corpus_file_of_the_same_size_is_rebuilt_never_served(app):
    """Two corpora of 400 documents: their index files have the same size."""
    rng = np.random.default_rng(5)
    cid, model = fill(app, "c", {f"d{i}": f"t{i}" for i in range(400)}, rng)
    other_id, _ = fill(app, "other", {f"o{i}": f"o{i}" for i in range(400)}, rng)
    for corpus_id in (cid, other_id):
        app.indexes.get(corpus_id, model)
        app.indexes.save(corpus_id, model)
    path = app.indexes.path(IndexKey(cid, model.id))
    other = app.indexes.path(IndexKey(other_id, model.id))
    assert path.stat().st_size == other.stat().st_size
    damage_foreign_index_only(path, other)
    index, _ = IndexCache(app.db, app.settings.index_dir).get(cid, model)
    assert_same(index, database_view(app, cid, model))


def test_advance_takes_a_batch_without_reading_it_back_unless_something_else_changed(
        app, streamed):
    rng = np.random.default_rng(3)
    cid, model = fill(app, "c", {f"d{i}": f"t{i}" for i in range(10)}, rng)
    app.indexes.get(cid, model)
    with app.db.session() as s:
        repo.add_documents(s, repo.get_corpus(s, "c"), [repo.NewDocument("n1", "one")])
    index, _ = app.indexes.get(cid, model)  # the upload (no vectors) is caught up
    before = streamed["rows"]
    with app.db.session() as s:
        [(doc_id, _)] = repo.documents_missing_embedding(s, cid, model.id, 0, 10)
        vector = unit(rng, 1)
        generation = repo.save_embeddings(s, cid, model.id, [doc_id], vector)
    app.indexes.advance(cid, model, generation, [doc_id], vector)
    assert streamed["rows"] == before  # added as given
    fill(app, "c", {"n2": "two"}, rng)  # a change the cache has not seen...
    with app.db.session() as s:
        repo.add_documents(s, repo.get_corpus(s, "c"), [repo.NewDocument("n3", "three")])
        [(doc_id, _)] = repo.documents_missing_embedding(s, cid, model.id, 0, 10)
        vector = unit(rng, 1)
        generation = repo.save_embeddings(s, cid, model.id, [doc_id], vector)
    index = app.indexes.advance(cid, model, generation, [doc_id], vector)
    assert_same(index, database_view(app, cid, model))  # ...so it caught up instead


def test_a_file_ahead_of_a_restored_database_is_rebuilt(app):
    rng = np.random.default_rng(4)
    cid, model = fill(app, "c", {f"d{i}": f"t{i}" for i in range(20)}, rng)
    db_file = app.settings.data_dir / "searchapp.db"
    backup = sqlite3.connect(app.settings.data_dir / "backup.db")
    with sqlite3.connect(db_file) as live:
        live.backup(backup)  # the database as it is now ...
    fill(app, "c", {"d3": "changed after the backup", "extra": "added after the backup"}, rng)
    app.indexes.get(cid, model)
    app.indexes.save(cid, model)  # ... and an index file from later
    app.db.dispose()
    with sqlite3.connect(db_file) as live:
        backup.backup(live)  # the backup is restored
    backup.close()
    index, _ = IndexCache(app.db, app.settings.index_dir).get(cid, model)
    assert_same(index, database_view(app, cid, model))
