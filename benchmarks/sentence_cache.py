"""Benchmark inputs: the shared sentence sets and their cached embeddings.

Embedding 60,000 sentences on a small CPU takes many minutes, so vectors are
cached under ``benchmarks/.cache/`` (ignored by git) in chunks, and an
interrupted run resumes from the last finished chunk.

Run it ahead of the benchmarks to fill the cache (STSb first, it is smaller):
    PYTHONPATH=. nice python benchmarks/sentence_cache.py stsb trec all
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

DATA = Path(os.environ.get("SEARCHAPP_SHARED_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))
CACHE = Path(__file__).resolve().parent / ".cache"
MODEL = "all-MiniLM-L6-v2"
CHUNK = 2000


def _read(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", keep_default_na=False)


def data_dir() -> Path:
    """The shared data folder: ``../shared/data`` beside the clone, or SEARCHAPP_SHARED_DATA."""
    if (DATA / "stsb").is_dir():
        return DATA
    raise SystemExit(f"shared data not found under {DATA}; set SEARCHAPP_SHARED_DATA")


def stsb_sentences() -> pd.DataFrame:
    """Unique STSb sentences with their source (``dataset`` column), first source wins.

    Returns columns ``text`` and ``source`` (MSRpar, headlines, images, ...).
    """
    df = _read(data_dir() / "stsb" / "stsbenchmark.tsv.gz")
    both = pd.concat([
        df[["sentence1", "dataset"]].set_axis(["text", "source"], axis=1),
        df[["sentence2", "dataset"]].set_axis(["text", "source"], axis=1),
    ])
    both = both[both.text.str.strip() != ""]
    return both.drop_duplicates("text").reset_index(drop=True)


def first_sentences(n: int) -> list[str]:
    """The first n unique sentences of STSb, then NLI premises/hypotheses (speed inputs)."""
    d = data_dir()
    sts = _read(d / "stsb" / "stsbenchmark.tsv.gz")
    nli = _read(d / "nli" / "nli-train-small.tsv.gz")
    pool = [*sts.sentence1, *sts.sentence2, *nli.premise, *nli.hypothesis]
    unique = [s.strip() for s in dict.fromkeys(pool) if s.strip()]
    if len(unique) < n:
        raise SystemExit(f"only {len(unique)} sentences available")
    return unique[:n]


def all_sentences() -> pd.DataFrame:
    """The unique sentences of STSb, NLI and MRPC (~60,000), with the file they came from."""
    d = data_dir()
    parts = [stsb_sentences().assign(source="stsb")[["text", "source"]]]
    for name, path, cols in (
        ("nli", d / "nli" / "nli-train-small.tsv.gz", ("premise", "hypothesis")),
        ("nli", d / "nli" / "nli-dev.tsv.gz", ("premise", "hypothesis")),
        ("mrpc", d / "mrpc" / "mrpc-train-dev.tsv.gz", ("sentence1", "sentence2")),
    ):
        df = _read(path)
        for col in cols:
            parts.append(pd.DataFrame({"text": df[col], "source": name}))
    out = pd.concat(parts)
    out = out[out.text.str.strip() != ""]
    return out.drop_duplicates("text").reset_index(drop=True)


def cached_vectors(name: str, texts: list[str], log=print, cached_only: bool = False
                   ) -> np.ndarray:
    """Embeddings (n, 384) of ``texts`` with the bundled model, cached chunk by chunk.

    With ``cached_only`` nothing is embedded: the vectors of the leading chunks
    already cached are returned (possibly fewer than ``texts``).
    """
    digest = hashlib.sha1("\n".join(texts).encode()).hexdigest()[:12]
    folder = CACHE / f"{name}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    encoder = None
    chunks = []
    started = time.perf_counter()
    for i, start in enumerate(range(0, len(texts), CHUNK)):
        path = folder / f"{i:04d}.npy"
        if not path.is_file():
            if cached_only:
                break
            if encoder is None:
                from searchapp.config import Settings
                from searchapp.embedding.models import load_encoder

                encoder = load_encoder(MODEL, Settings.from_env({"SEARCHAPP_DEVICE": "cpu"}))
            vectors = encoder.encode(texts[start:start + CHUNK])
            np.save(path.with_suffix(".tmp.npy"), vectors)
            path.with_suffix(".tmp.npy").rename(path)
            log(f"{name}: {min(start + CHUNK, len(texts))}/{len(texts)} embedded "
                f"({time.perf_counter() - started:.0f} s)")
        chunks.append(np.load(path))
    return np.concatenate(chunks) if chunks else np.zeros((0, 384), np.float32)


def stsb_vectors(log=print) -> tuple[pd.DataFrame, np.ndarray]:
    """The STSb sentences and their vectors (n, 384)."""
    frame = stsb_sentences()
    return frame, cached_vectors("stsb", frame.text.tolist(), log)


def trec_questions() -> pd.DataFrame:
    """The 5,452 TREC questions with their gold classes: columns ``text``, ``coarse``, ``fine``."""
    df = _read(data_dir() / "trec-qc" / "trec-train.tsv.gz")
    return df[["text", "coarse", "fine"]].reset_index(drop=True)


def trec_vectors(log=print) -> tuple[pd.DataFrame, np.ndarray]:
    """The TREC questions and their vectors (n, 384)."""
    frame = trec_questions()
    return frame, cached_vectors("trec", frame.text.tolist(), log)


def all_vectors(log=print, cached_only: bool = False) -> tuple[pd.DataFrame, np.ndarray]:
    """All ~60,000 sentences and their vectors; the STSb part reuses the STSb cache.

    With ``cached_only``, only the leading sentences already embedded (see
    ``cached_vectors``).
    """
    frame = all_sentences()
    n_stsb = int((frame.source == "stsb").sum())  # STSb rows come first, in the same order
    _, head = stsb_vectors(log)
    assert len(head) == n_stsb
    tail = cached_vectors("rest", frame.text.iloc[n_stsb:].tolist(), log, cached_only)
    vectors = np.concatenate([head, tail])
    return frame.iloc[:len(vectors)].reset_index(drop=True), vectors


if __name__ == "__main__":
    sets = {"stsb": stsb_vectors, "trec": trec_vectors, "all": all_vectors}
    for arg in sys.argv[1:] or ["stsb", "all"]:
        frame, vecs = sets[arg](log=lambda m: print(m, flush=True))
        print(arg, vecs.shape, flush=True)
