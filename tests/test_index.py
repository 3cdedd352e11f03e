import numpy as np
import pytest

from searchapp.errors import IndexCorruptError, InvalidParameterError
from searchapp.vectors.index import EXACT_MAX, VectorIndex


def unit(rng, n, dim=16):
    x = rng.normal(size=(n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def brute(vectors, labels, q, k):
    scores = q @ vectors.T
    order = np.argsort(-scores, axis=1)[:, :k]
    return labels[order]


def test_small_index_is_exact_and_clamps_k():
    rng = np.random.default_rng(0)
    x = unit(rng, 50)
    idx = VectorIndex(16)
    idx.add(np.arange(100, 150), x)
    labels, scores = idx.search(x[:3], k=500)
    assert labels.shape == (3, 50)
    assert np.array_equal(labels, brute(x, np.arange(100, 150), x[:3], 50))
    assert np.allclose(scores[:, 0], 1.0, atol=1e-5)
    with pytest.raises(InvalidParameterError):
        idx.search(x[:1], k=0)


def test_hnsw_above_the_exact_threshold_has_high_recall():
    rng = np.random.default_rng(1)
    n = EXACT_MAX + 1000
    x = unit(rng, n, 32)
    idx = VectorIndex(32, capacity=10)  # forces resizes while adding
    for start in range(0, n, 1500):
        idx.add(np.arange(start, min(start + 1500, n)), x[start:start + 1500])
    q = unit(rng, 50, 32)
    got, _ = idx.search(q, 10)
    want = brute(x, np.arange(n), q, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, want, strict=True)])
    assert recall >= 0.95


def test_deleted_labels_never_come_back_until_re_added():
    rng = np.random.default_rng(2)
    x = unit(rng, 10)
    idx = VectorIndex(16)
    idx.add(np.arange(10), x)
    idx.delete(np.array([3, 99]))
    labels, _ = idx.search(x[3:4], 10)
    assert 3 not in labels and idx.count == 9
    idx.add(np.array([3]), x[3:4])
    assert idx.search(x[3:4], 1)[0][0, 0] == 3 and idx.count == 10


def test_save_load_round_trip_and_corruption_is_detected(tmp_path):
    rng = np.random.default_rng(3)
    x = unit(rng, 20)
    idx = VectorIndex(16)
    idx.add(np.arange(20), x)
    idx.delete(np.array([5]))
    path = tmp_path / "i.hnsw"
    idx.save(path, {"model": "m"})
    back = VectorIndex.load(path, {"model": "m", "dimension": 16})
    assert back.count == 19 and np.array_equal(back.labels(), idx.labels())
    with pytest.raises(IndexCorruptError, match="does not match"):
        VectorIndex.load(path, {"model": "other"})
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(IndexCorruptError):
        VectorIndex.load(path, {"model": "m"})
