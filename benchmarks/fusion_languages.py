"""The multilingual model's own hybrid fusion: its semantic weights chosen on held-apart pages.

Hybrid search fuses the encoder's list and the words' list by weighted reciprocal rank
(``searchapp.search.fusion``); the default weights (semantic 3 : lexical 1) were chosen on
English with all-MiniLM-L6-v2. With ``use-multilingual-v3`` on German, French, Spanish or
Japanese pages, BM25 is as strong as the encoder within a language
(``benchmarks/languages.py``), so the weight that suits MiniLM on English need not suit it.

Protocol (nothing chosen on the pages that are reported):

- **choose** on Debian's translated manual pages of sections 2-8 (``/usr/share/man/{de,fr,
  es,ja}/man[2-8]`` beside ``/usr/share/man/man[2-8]``), which ``benchmarks/languages.py``
  never reads: the semantic weight for a query written in the corpus' language
  (``translated_words.WordsSide.in_corpus_language``), the others keeping today's 3. For
  each weight of ``WEIGHTS``, the mean MRR@10 over every direction (X→X, en→X, X→en and
  en→en on X's pages, for each X) of the app's own hybrid search (``search(...,
  fusion=Fusion(...))``, the query's words translated as the app does) on corpora of
  ``use-multilingual-v3``; the best mean wins. The means of every pair (that weight, a
  weight for the other queries) are kept in the JSON for the record;
- **report** on section 1 (the pages, queries and seed of ``benchmarks/languages.py``) the
  chosen pair against one weight of 3 for every query (the fusion before), per direction,
  with the paired difference and its 95% interval, and the share of each direction's
  queries told to be in the corpus' language.

A query holding a digit keeps the lower of its weight and today's digit weight (1), as the
default fusion gives such queries.

Run:  PYTHONPATH=. .venv/bin/python benchmarks/fusion_languages.py [--pages 300] [--seed 48]
Writes benchmarks/results/fusion_languages.json and prints both tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import languages as lang_bench

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "fusion_languages.json"
MAN = Path("/usr/share/man")
DEV_SECTIONS = tuple(f"man{n}" for n in range(2, 9))
WEIGHTS = (0.5, 1.0, 1.5, 2.0, 3.0)
TODAY = 3.0  # the default fusion's semantic weight (searchapp.search.fusion.SEMANTIC_WEIGHT)
MODEL = lang_bench.MULTILINGUAL


def dev_folders(scratch: Path) -> dict[str, Path]:
    """A folder per language holding links to its pages of sections 2-8 (names keep their
    section, ``passwd.5.gz``), read by ``languages.read_language`` as it reads man1."""
    folders = {}
    for lang in lang_bench.FOLDERS:
        folder = scratch / lang
        folder.mkdir()
        base = MAN if lang == "en" else MAN / lang
        for section in DEV_SECTIONS:
            for page in sorted((base / section).glob("*.gz")):
                if not (folder / page.name).exists():
                    (folder / page.name).symlink_to(page)
        folders[lang] = folder
    return folders


def build(app, pages: dict, runs: list[dict]) -> dict:
    """The multilingual corpora the runs need, embedded."""
    from searchapp.jobs.worker import work

    started = time.perf_counter()
    done = set()
    for run in runs:
        name = lang_bench.corpus_name(MODEL, run["docs"], run["set"])
        if name not in done:
            lang_bench.store(app, name, [pages[run["docs"]][n] for n in run["names"]], MODEL)
            done.add(name)
    work(app, stop_when_idle=True)
    return {"corpora": len(done), "seconds": round(time.perf_counter() - started, 1)}


def fusion_of(weight: float):
    """One semantic weight for every query (no weight of its own for the corpus' language)."""
    from searchapp.search.fusion import DIGIT_WEIGHT, Fusion

    return Fusion(semantic_weight=weight, digit_weight=min(weight, DIGIT_WEIGHT),
                  same_language_weight=None)


def reciprocal_ranks(app, run: dict, weight: float) -> np.ndarray:
    """1/rank of each query's page in the app's hybrid top 10 with this semantic weight."""
    from searchapp.search.service import search

    corpus = lang_bench.corpus_name(MODEL, run["docs"], run["set"])
    fusion = fusion_of(weight)
    out = np.zeros(len(run["queries"]))
    for i, (query, page) in enumerate(zip(run["queries"], run["names"], strict=True)):
        ids = [h.id for h in search(app, corpus, query, k=lang_bench.K, mode="hybrid",
                                    fusion=fusion)]
        out[i] = 1.0 / (ids.index(page) + 1) if page in ids else 0.0
    return out


def in_corpus_language(app, run: dict) -> np.ndarray:
    """Per query, whether the app tells it is written in the corpus' language (bool array)."""
    from searchapp.search.translated_words import words_side
    from searchapp.vectors.handle import open_corpus

    handle = open_corpus(app, lang_bench.corpus_name(MODEL, run["docs"], run["set"]))
    return np.array([bool(words_side(app, handle, q).in_corpus_language)
                     for q in run["queries"]])


def measure(app, runs: list[dict], weights: tuple[float, ...]) -> dict:
    """{direction: {weight: reciprocal ranks, "same": in the corpus' language}} for the
    translated directions."""
    return {run["direction"]: {**{w: reciprocal_ranks(app, run, w) for w in weights},
                               "same": in_corpus_language(app, run)}
            for run in runs if run["direction"] != "en→en"}


def combined(by_weight: dict, pair: tuple[float, float]) -> np.ndarray:
    """Each query's reciprocal rank under the pair (weight in the corpus' language, weight
    otherwise): what the app's fusion with those two weights gives."""
    same, other = pair
    return np.where(by_weight["same"], by_weight[same], by_weight[other])


def on_pages(folders: dict[str, Path], cap: int, seed: int, weights: tuple[float, ...]
             ) -> tuple[dict, dict]:
    from searchapp.config import Settings
    from searchapp.context import App

    saved = dict(lang_bench.FOLDERS)
    lang_bench.FOLDERS.update(folders)
    try:
        pages = {lang: lang_bench.read_language(lang) for lang in lang_bench.FOLDERS}
    finally:
        lang_bench.FOLDERS.update(saved)
    runs = lang_bench.directions(pages, cap, seed)
    with tempfile.TemporaryDirectory(prefix="bench-fusion-languages-") as data:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}))
        built = build(app, pages, runs)
        ranks = measure(app, runs, weights)
        app.db.dispose()
    return ranks, {"built": built, "queries": {d: len(next(iter(r.values())))
                                               for d, r in ranks.items()}}


def choose(ranks: dict) -> tuple[tuple[float, float], dict]:
    """The weight for a query in the corpus' language with the best mean MRR over the
    directions (each direction weighs the same), the other queries keeping today's: the
    change is about the queries the words now tell; the means of every pair are returned for
    the record."""
    pairs = [(a, b) for a in WEIGHTS for b in WEIGHTS]
    means = {p: float(np.mean([combined(r, p).mean() for r in ranks.values()])) for p in pairs}
    chosen = max([p for p in pairs if p[1] == TODAY], key=means.get)
    return chosen, {f"{a:g}/{b:g}": round(m, 4) for (a, b), m in means.items()}


def report(ranks: dict, chosen: tuple[float, float]) -> list[dict]:
    from searchapp.evaluation.bootstrap import mean_interval, paired_mean_difference

    rows = []
    for direction, by_weight in ranks.items():
        mine = combined(by_weight, chosen)
        rows.append({
            "direction": direction,
            "in_corpus_language": round(float(by_weight["same"].mean()), 3),
            "today": mean_interval(by_weight[TODAY]).scaled(1.0, 3),
            "chosen": mean_interval(mine).scaled(1.0, 3),
            "chosen - today": paired_mean_difference(by_weight[TODAY], mine).scaled(1.0, 3)})
    return rows


def table(rows: list[dict], chosen: tuple[float, float]) -> str:
    lines = [f"| direction | told in the corpus' language | semantic weight {TODAY:g} (before) |"
             f" {chosen[0]:g} in the corpus' language, {chosen[1]:g} otherwise (chosen) | "
             "difference |", "|---|---|---|---|---|"]
    for row in rows:
        t, c, d = row["today"], row["chosen"], row["chosen - today"]
        lines.append(f"| {row['direction']} | {row['in_corpus_language']:.0%} | "
                     f"{t['value']:.3f} [{t['low']:.3f}, {t['high']:.3f}]"
                     f" | {c['value']:.3f} [{c['low']:.3f}, {c['high']:.3f}] | "
                     f"{d['delta']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}] {d['verdict']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-fusion-pages-") as scratch:
        dev, dev_info = on_pages(dev_folders(Path(scratch)), args.pages, args.seed, WEIGHTS)
    chosen, means = choose(dev)
    print(f"dev (sections 2-8): mean MRR@10 by semantic weights (in the corpus' language / "
          f"otherwise) {means}; chosen {chosen[0]:g}/{chosen[1]:g}", flush=True)
    weights = tuple(sorted({TODAY, *chosen}))
    test, test_info = on_pages(dict(lang_bench.FOLDERS), args.pages, args.seed, weights)
    dev_rows, test_rows = report(dev, chosen), report(test, chosen)
    print("\nchosen on (sections 2-8):\n" + table(dev_rows, chosen))
    print("\nreported on (section 1, benchmarks/languages.py's pages):\n"
          + table(test_rows, chosen))
    result = {
        "what": "use-multilingual-v3's hybrid semantic weights, for a query in the corpus' "
                "language and otherwise: chosen on man2-8, reported on man1 (the query's words "
                "translated as the app does)",
        "weights": list(WEIGHTS), "today": TODAY, "chosen": list(chosen), "dev_means": means,
        "pages_per_language": args.pages, "seed": args.seed, "metric": "MRR@10",
        "dev": {**dev_info, "rows": dev_rows}, "test": {**test_info, "rows": test_rows},
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
        "seconds": round(time.perf_counter() - started, 1)}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
