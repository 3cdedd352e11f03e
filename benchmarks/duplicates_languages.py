"""Duplicates across languages (issue 48): is a translation its original's nearest duplicate?

Collection: the NAME summaries of Debian's manual pages (``benchmarks/languages.py`` reads
them: ``/usr/share/man/man1`` and the translations of manpages-de, -fr, -es, -ja). For each
language X, one corpus holds the English summary and X's summary of each page in both
(a sample of ``--pages``, seeded; summaries that two pages share are left out), ids
``<page>`` and ``<page>@X``. The summaries are short ("list directory contents",
"Verzeichnisinhalte auflisten"), and many pages have close ones ("print or check SHA256
(256-bit) checksums", "... SHA512 ..."): a hard pool.

Through the app's duplicates service (``find_duplicates``, its mining over the corpus's
index, k=5, threshold 0: every mined pair), for each model:

- ``nearest``: the share of translated summaries whose best pair is their English original
  (with a percentile-bootstrap 95% interval over the pages);
- ``at_default``: the share of translation pairs at or above the duplicates threshold the
  model gets by default (0.80 for MiniLM, 0.75 for the multilingual model), the pairs a
  user sees without calibrating;
- the translation pairs' cosines (10th percentile, median) and the best cosine of a pair that
  is not a translation, for choosing a threshold.

Run:  OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python benchmarks/duplicates_languages.py
Writes benchmarks/results/duplicates_languages.json and prints the table.
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

from benchmarks.languages import FOLDERS, OTHERS, read_language, sample

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "duplicates_languages.json"
MODELS = ("all-MiniLM-L6-v2", "use-multilingual-v3")
K = 5


def pairs_of(pages: dict, lang: str, cap: int, seed: int) -> list[tuple[str, str, str]]:
    """(page, English summary, X's summary) for a seeded sample of the pages in both."""
    both = set(pages["en"]) & set(pages[lang])
    english = {n: pages["en"][n].summary for n in both}
    translated = {n: pages[lang][n].summary for n in both}
    names = sorted(set(sample(both, cap, seed, english)) & set(sample(both, cap, seed,
                                                                      translated)))
    return [(n, english[n], translated[n]) for n in names]


def store(app, corpus: str, pairs: list[tuple[str, str, str]], lang: str, model: str) -> None:
    from searchapp.intake.table import Table
    from searchapp.intake.table_upload import upload

    records = [r for n, en, tr in pairs for r in ({"id": n, "text": en},
                                                  {"id": f"{n}@{lang}", "text": tr})]
    upload(app, Table.from_records(records, lambda i: f"row {i}", fmt="csv"), corpus,
           text_column="text", id_column="id", model=model)


def measure(app, corpus: str, pairs: list[tuple[str, str, str]], lang: str) -> dict:
    """The shares and cosines of one corpus (see the module's docstring)."""
    from searchapp.duplicates.service import find_duplicates
    from searchapp.evaluation.bootstrap import mean_interval
    from searchapp.pairs.threshold import threshold_for

    report = find_duplicates(app, corpus, threshold=0.0, k=K)
    best: dict[str, tuple[str, float]] = {}
    cosine: dict[frozenset, float] = {}
    for p in report.pairs:
        cosine[frozenset((p.a, p.b))] = p.score
        for one, other in ((p.a, p.b), (p.b, p.a)):
            if one not in best or p.score > best[one][1]:
                best[one] = (other, p.score)
    nearest = np.array([best.get(f"{n}@{lang}", ("", 0))[0] == n for n, _, _ in pairs], float)
    own = np.array([cosine.get(frozenset((n, f"{n}@{lang}")), np.nan) for n, _, _ in pairs])
    default = threshold_for(app, report.model)[0]
    others = [s for key, s in cosine.items()
              if not any(a.split("@")[0] == b.split("@")[0] for a in key for b in key if a != b)]
    return {"pages": len(pairs), "nearest": mean_interval(nearest).scaled(1.0, 3),
            "at_default": round(float(np.mean(np.nan_to_num(own, nan=0.0) >= default)), 3),
            "default_threshold": default,
            "translation_cosine_p10": round(float(np.nanpercentile(own, 10)), 3),
            "translation_cosine_median": round(float(np.nanmedian(own)), 3),
            "translation_pairs_mined": int(np.sum(~np.isnan(own))),
            "best_other_cosine": round(float(max(others, default=0.0)), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=200, help="pages per language (a sample)")
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    if missing := [str(f) for f in FOLDERS.values() if not f.is_dir()]:
        raise SystemExit(f"Missing {', '.join(missing)}: apt-get install -y manpages-de "
                         "manpages-fr manpages-es manpages-ja")
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.jobs.worker import work

    started = time.perf_counter()
    pages = {lang: read_language(lang) for lang in FOLDERS}
    plan = {lang: pairs_of(pages, lang, args.pages, args.seed) for lang in OTHERS}
    rows = []
    print("| pair | pages | model | nearest (95% interval) | at default | cosine p10 / median "
          "| best other |\n|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="bench-dup-languages-") as data:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}))
        for lang, pairs in plan.items():
            for model in MODELS:
                store(app, f"{lang}-{model}", pairs, lang, model)
        work(app, stop_when_idle=True)
        for lang, pairs in plan.items():
            for model in MODELS:
                row = {"pair": f"en-{lang}", "model": model,
                       **measure(app, f"{lang}-{model}", pairs, lang)}
                n = row["nearest"]
                print(f"| {row['pair']} | {row['pages']} | {model} | {n['value']:.3f} "
                      f"[{n['low']:.3f}, {n['high']:.3f}] | {row['at_default']:.3f} | "
                      f"{row['translation_cosine_p10']:.3f} / "
                      f"{row['translation_cosine_median']:.3f} | {row['best_other_cosine']:.3f} |",
                      flush=True)
                rows.append(row)
        app.db.dispose()
    result = {"collection": "Debian manual pages, man1 NAME summaries: en and the translations "
                            "of manpages-de, manpages-fr, manpages-es, manpages-ja",
              "service": f"searchapp.duplicates.service.find_duplicates(threshold=0, k={K})",
              "pages_per_language": args.pages, "seed": args.seed,
              "interval": "percentile bootstrap 95% over pages (searchapp.evaluation.bootstrap)",
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "seconds": round(time.perf_counter() - started, 1), "rows": rows}
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {args.out} ({result['seconds']} s)")


if __name__ == "__main__":
    main()
