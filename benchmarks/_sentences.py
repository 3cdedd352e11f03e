"""The ~60,000 unique sentences of ../shared/data and their cached bundled-model vectors.

Embedding 60k sentences on two shared CPU cores takes 10+ minutes, so the vectors
are cached in ``benchmarks/.cache/`` (ignored by git), keyed by a hash of the
sentence list and the model name.

Run ``PYTHONPATH=. nice python benchmarks/_sentences.py`` once to fill the cache.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SEARCHAPP_SHARED_DATA", ROOT.parent / "shared" / "data"))
CACHE = ROOT / "benchmarks" / ".cache"
MODEL = "all-MiniLM-L6-v2"


def _read(name: str) -> pd.DataFrame:
    return pd.read_csv(SHARED / name, sep="\t", keep_default_na=False)


def unique_sentences() -> list[str]:
    """Every distinct sentence of STSb, NLI (both files) and MRPC, in first-seen order."""
    columns = [("stsb/stsbenchmark.tsv.gz", ("sentence1", "sentence2")),
               ("nli/nli-train-small.tsv.gz", ("premise", "hypothesis")),
               ("nli/nli-dev.tsv.gz", ("premise", "hypothesis")),
               ("mrpc/mrpc-train-dev.tsv.gz", ("sentence1", "sentence2"))]
    seen: dict[str, None] = {}
    for name, cols in columns:
        frame = _read(name)
        for col in cols:
            seen.update(dict.fromkeys(frame[col].astype(str)))
    return [s for s in seen if s.strip()]


def cached_vectors(sentences: list[str], log=print) -> np.ndarray:
    """Unit vectors (n, 384) float32 of ``sentences`` under the bundled model (cached)."""
    digest = hashlib.sha256(("\n".join(sentences) + MODEL).encode()).hexdigest()[:16]
    path = CACHE / f"sentences-{len(sentences)}-{digest}.npy"
    if path.is_file():
        return np.load(path)
    from searchapp.encoder import SiameseEncoder
    from searchapp.models import BUNDLED

    encoder = SiameseEncoder.load(BUNDLED[MODEL](), device="cpu")
    started, parts = time.monotonic(), []
    for start in range(0, len(sentences), 2048):
        parts.append(encoder.encode(sentences[start:start + 2048], batch_size=64))
        log(f"embedded {start + len(parts[-1])}/{len(sentences)} "
            f"({time.monotonic() - started:.0f} s)")
    vectors = np.concatenate(parts)
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    os.replace(tmp, path)
    return vectors


if __name__ == "__main__":
    sents = unique_sentences()
    print(f"{len(sents)} unique sentences", flush=True)
    vecs = cached_vectors(sents, log=lambda m: print(m, flush=True))
    print(vecs.shape, file=sys.stderr)
