"""Japanese words inside sentences: the share the app's lexical search finds.

Collection: the Japanese manual pages of Debian (``manpages-ja``, /usr/share/man/ja/man1),
each page's visible text (every section, roff read as ``benchmarks/languages.py`` reads it)
one document of a corpus of ``--pages`` pages (a seeded sample). Queries: ``--words``
(word, page) pairs drawn with the seed: a word is a whole run of kanji or of katakana of 2
to 4 characters (``ファイル``, ``表示``) that stands inside a longer run of Japanese text
of its page (``ファイルを表示する``): the case a search by words must find. Each word is
searched with the app's lexical search (``search(..., mode="lexical")``); found when its
page is among the hits at all (every hit asked for), and in the top 10.

Run it on the code before and after a change (the label names the run; each label's
numbers are kept in the results file beside the others):

    PYTHONPATH=/path/to/old/checkout OMP_NUM_THREADS=1 python benchmarks/cjk_words.py \
        --label before
    PYTHONPATH=. OMP_NUM_THREADS=1 python benchmarks/cjk_words.py --label after
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "cjk_words.json"
FOLDER = Path("/usr/share/man/ja/man1")
SCRIPT_RUNS = re.compile(r"[\u4e00-\u9fff\u3005]+|[\u30a1-\u30fa\u30fc]+")
RUNS = re.compile(r"[\u3041-\u3096\u30a1-\u30fa\u30fc\u4e00-\u9fff\u3005]+")
TOP = 10
MAX_CHARS = 6_000  # each page's first characters: the corpus is embedded too (search needs it)


def page_text(path: Path) -> str | None:
    """A page's visible text, every section (None when it cannot be read or is a link)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from languages import _sections

    try:
        roff = gzip.decompress(path.read_bytes()).decode("utf-8")
    except (OSError, UnicodeDecodeError, EOFError):
        return None
    if roff.lstrip().startswith(".so"):
        return None
    text = "\n".join(f"{heading}\n{body}" for heading, body in _sections(roff))
    return text[:MAX_CHARS] if RUNS.search(text) else None


def words_inside(text: str) -> list[str]:
    """The text's words (whole kanji or katakana runs of 2-4 characters) that stand inside
    a longer Japanese run, each once.

    Example:
        >>> words_inside("ファイルを表示する。表示")
        ['ファイル', '表示']
    """
    out = []
    for run in RUNS.finditer(text):
        out += [w.group() for w in SCRIPT_RUNS.finditer(run.group())
                if 2 <= len(w.group()) <= 4 and len(w.group()) < len(run.group())]
    return list(dict.fromkeys(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", required=True, help="this run's name (before, after)")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--words", type=int, default=300)
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--out", type=Path, default=RESULT)
    args = parser.parse_args()
    from searchapp.config import Settings
    from searchapp.context import App
    from searchapp.intake.table import Table
    from searchapp.intake.table_upload import upload
    from searchapp.jobs.worker import work
    from searchapp.search.service import search

    rng = random.Random(args.seed)
    texts = {p.name: t for p in sorted(FOLDER.glob("*.gz")) if (t := page_text(p))}
    names = sorted(rng.sample(sorted(texts), min(args.pages, len(texts))))
    pairs = sorted({(w, n) for n in names for w in words_inside(texts[n])})
    pairs = rng.sample(pairs, min(args.words, len(pairs)))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-cjk-") as data:
        app = App(Settings.from_env({"SEARCHAPP_DATA_DIR": data, "SEARCHAPP_DEVICE": "cpu"}))
        records = [{"id": n, "text": texts[n]} for n in names]
        upload(app, Table.from_records(records, lambda i: f"row {i}", fmt="csv"), "ja",
               text_column="text", id_column="id")
        work(app, stop_when_idle=True)  # the embedding: a corpus is searched once embedded
        found = top = 0
        missed = []
        for word, page in pairs:
            ids = [h.id for h in search(app, "ja", word, k=len(names), mode="lexical")]
            found += page in ids
            top += page in ids[:TOP]
            if page not in ids and len(missed) < 10:
                missed.append([word, page])
        app.db.dispose()
    row = {"pages": len(names), "words": len(pairs), "found_share": round(found / len(pairs), 3),
           f"top{TOP}_share": round(top / len(pairs), 3), "missed_examples": missed,
           "seconds": round(time.perf_counter() - started, 1)}
    print(json.dumps({args.label: row}, ensure_ascii=False))
    kept = json.loads(args.out.read_text()) if args.out.exists() else {}
    kept.update({"collection": f"Debian manpages-ja, {FOLDER}: each page's visible text",
                 "queries": "whole kanji or katakana runs of 2-4 characters inside longer "
                            "Japanese runs, (word, page) pairs sampled with the seed",
                 "found": "the word's page among the lexical hits (all asked for)",
                 "seed": args.seed})
    kept.setdefault("runs", {})[args.label] = row
    args.out.write_text(json.dumps(kept, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
