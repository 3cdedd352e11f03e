"""Language detection (``searchapp.intake.language``) on documents of known language.

Collection: Debian's manual pages in sections 1 and 8, English from ``manpages`` and the
packages' own pages (``/usr/share/man/man{1,8}``), translations from ``manpages-de``,
``manpages-fr``, ``manpages-es``, ``manpages-ja`` (``/usr/share/man/<lang>/man{1,8}``),
plus Russian and Simplified Chinese where installed (``ru``, ``zh_CN``). A page's language
is the folder it is installed in. Up to ``--pages`` pages per language (evenly spread over
the sorted names), each read as running text (troff requests and escapes removed; a request
that starts a paragraph or section, ``.PP .SH .TP ...``, ends a paragraph).

Measured, per language:

- **whole pages**: ``detect`` of the page's text; and ``document_languages`` of it with its
  paragraphs as parts (as ingest reads a one-part document): ``lang`` right, and the share
  given a ``langs`` (a second language: untranslated English paragraphs, or a false one);
- **paragraphs**: every paragraph with at least 40 letters (up to ``--paragraphs``);
- **short texts**: the first 20, 50 and 100 characters of those paragraphs;
- **mixed**: a document of two sections, a paragraph of the language (≥ 200 characters)
  then an English one (for English: German) cut to half its length (at a space), through
  ``document_languages``: ``lang`` right, and ``langs`` listing exactly the two.

For each: the share right, the share "und" (the detector abstains) and the share wrong
(another language: the error that costs a user a wrong facet). The translated pages hold
English left untranslated (options, examples, whole untranslated paragraphs), so some
"wrong" texts are English in fact (``wrong_as`` says which languages the wrong ones were
told as). For Japanese, Russian and Chinese, whose folders hold many pages never
translated, a page counts only when at least 30% of its letters are not ASCII, a
paragraph when at least 50% are; Latin-script languages cannot be sorted so. Also the
cost: ms per page (``detect``) and per document (``document_languages``), and with
``--ingest DIR`` the files path's reading of a real folder (``extract_file`` on each file,
inline) in documents/s with the language detection and with it replaced by nothing
(before).

Run:
    PYTHONPATH=$PWD .venv/bin/python benchmarks/language_detection.py \\
        --ingest /usr/share/doc/git-doc
Results: benchmarks/results/language_detection.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from searchapp.intake import extract
from searchapp.intake.formats.document import DocumentError
from searchapp.intake.language import UNDETERMINED, detect, document_languages

MAN = Path("/usr/share/man")
LANGUAGES = {"en": MAN, "de": MAN / "de", "fr": MAN / "fr", "es": MAN / "es",
             "ja": MAN / "ja", "ru": MAN / "ru", "zh": MAN / "zh_CN"}
SHORT = (20, 50, 100)
NON_LATIN = {"ja", "ru", "zh"}  # a text of these with mostly ASCII letters is untranslated
BREAK = re.compile(r"^[.'](PP|LP|P|SH|SS|TP|IP|HP|sp|br|Sh|Pp|It|Bl|El)\b")
REQUEST = re.compile(r"^[.'][A-Za-z]{1,3}\b ?")
ESCAPE = re.compile(r"\\(f\[[^]]*]|f\(..|f.|\(..|\*\(..|\*\[[^]]*]|\*.|\[[^]]*]|.)")
LETTER = re.compile(r"[^\W\d_]")
OUT = Path(__file__).parent / "results" / "language_detection.json"


def paragraphs(path: Path) -> list[str]:
    """A manual page's paragraphs of running text."""
    raw = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    out, current = [], []
    for line in raw.splitlines():
        if line.startswith(('.\\"', "'\\\"")):
            continue
        if BREAK.match(line) and current:
            out.append(" ".join(current))
            current = []
        text = ESCAPE.sub("", REQUEST.sub("", line)).strip()
        if text:
            current.append(text)
    if current:
        out.append(" ".join(current))
    return out


def pages(folder: Path, limit: int) -> list[Path]:
    """Up to ``limit`` gzipped pages of sections 1 and 8, evenly spread over their names."""
    found = sorted(p for s in ("man1", "man8") for p in (folder / s).glob("*.gz")
                   if p.is_file())
    if len(found) <= limit:
        return found
    step = len(found) / limit
    return [found[int(i * step)] for i in range(limit)]


def translated(code: str, text: str, share: float) -> bool:
    """False for a text of a non-Latin script language whose letters are mostly ASCII
    (left in English): its folder is not its language."""
    if code not in NON_LATIN:
        return True
    letters = LETTER.findall(text)
    return bool(letters) and sum(not c.isascii() for c in letters) >= share * len(letters)


def tally(truth: str, codes: list[str]) -> dict:
    """Shares right, undetermined and wrong of ``codes`` against ``truth``."""
    n = len(codes)
    right = sum(c == truth for c in codes)
    und = sum(c == UNDETERMINED for c in codes)
    confused = Counter(c for c in codes if c not in (truth, UNDETERMINED)).most_common(3)
    return {"n": n, "right": round(right / n, 4) if n else None,
            "und": round(und / n, 4) if n else None,
            "wrong": round((n - right - und) / n, 4) if n else None,
            "wrong_as": dict(confused)}


def one_language(code: str, folder: Path, other: list[str], args) -> dict | None:
    """Every measure for one language, or None where its pages are not installed."""
    chosen = pages(folder, args.pages)
    if not chosen:
        return None
    texts = [paragraphs(p) for p in chosen]
    whole = [w for t in texts if t and translated(code, w := "\n\n".join(t), 0.3)]
    paras = [p for t in texts for p in t
             if len(LETTER.findall(p)) >= 40 and translated(code, p, 0.5)][:args.paragraphs]
    started = time.perf_counter()
    page_codes = [detect(t)[0] for t in whole]
    page_ms = (time.perf_counter() - started) * 1000 / max(len(whole), 1)
    started = time.perf_counter()
    per_part = [document_languages(t, None) for t in whole]
    part_ms = (time.perf_counter() - started) * 1000 / max(len(whole), 1)
    result = {"pages": tally(code, page_codes), "ms_per_page": round(page_ms, 3),
              "pages_by_paragraph": {**tally(code, [m["lang"] for m in per_part]),
                                     "with_langs": round(sum("langs" in m for m in per_part)
                                                         / max(len(per_part), 1), 4),
                                     "ms_per_page": round(part_ms, 3)},
              "paragraphs": tally(code, [detect(p)[0] for p in paras])}
    for size in SHORT:
        result[f"first_{size}_chars"] = tally(code, [detect(p[:size])[0] for p in paras])
    result["mixed"] = mixed(code, paras, other, args)
    return result


def mixed(code: str, paras: list[str], other: list[str], args) -> dict:
    """Two-section documents: a paragraph of ``code`` then one of the other language."""
    second = "de" if code == "en" else "en"
    mine = [p for p in paras if len(p) >= 200]
    theirs = [p for p in other if len(p) >= 100]
    docs = []
    for i, first in enumerate(mine[:args.mixed]):
        fit = [p for p in theirs[i:] + theirs[:i] if len(p) >= len(first) // 2]
        if fit:
            half = fit[0][:len(first) // 2].rsplit(" ", 1)[0]
            text = f"{first}\n\n{half}"
            docs.append((text, [[0, len(first), None, None],
                                [len(first) + 2, len(text), None, None]]))
    started = time.perf_counter()
    found = [document_languages(text, layout) for text, layout in docs]
    ms = (time.perf_counter() - started) * 1000 / max(len(docs), 1)
    n = len(found)
    return {"n": n, "second": second, "ms_per_document": round(ms, 3),
            "lang_right": round(sum(f["lang"] == code for f in found) / n, 4) if n else None,
            "langs_exact": round(sum(f.get("langs") == f"{code},{second}" for f in found) / n,
                                 4) if n else None}


def ingest_speed(folder: Path) -> dict:
    """The files path's reading of ``folder`` (documents/s), with and without detection."""
    files = sorted(p for p in folder.rglob("*") if p.is_file()
                   and extract.document_type(p.name))
    real = extract.document_languages

    def read_all() -> tuple[int, float]:
        started, n = time.perf_counter(), 0
        for p in files:
            try:
                n += len(extract.extract_file(str(p), p.name, p.stat().st_size, None,
                                              "0" * 64).documents)
            except DocumentError:  # a file the app would report; not a document
                continue
        return n, time.perf_counter() - started

    read_all()  # warm: readers imported, the model loaded, the files cached
    runs = {}
    for label, func in (("before", lambda text, layout: {}), ("after", real)) * 2:
        extract.document_languages = func
        n, seconds = read_all()
        runs.setdefault(label, []).append(n / seconds)
    extract.document_languages = real
    return {"folder": str(folder), "files": len(files), "documents": n,
            **{f"{k}_docs_per_s": round(statistics.median(v), 1) for k, v in runs.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=150)
    parser.add_argument("--paragraphs", type=int, default=600)
    parser.add_argument("--mixed", type=int, default=200)
    parser.add_argument("--ingest", type=Path, help="a folder to read with and without")
    args = parser.parse_args()
    detect("warm the model up: load it once before anything is timed")
    english = [p for page in pages(MAN, 40) for p in paragraphs(page)]
    german = [p for page in pages(MAN / "de", 40) for p in paragraphs(page)]
    results = {"detector": "py3langid 0.4.0, restricted to searchapp.intake.language.LANGUAGES",
               "collection": "Debian manual pages, sections 1 and 8, by installed folder",
               "languages": {}}
    for code, folder in LANGUAGES.items():
        measured = one_language(code, folder, german if code == "en" else english, args)
        if measured:
            results["languages"][code] = measured
            print(code, json.dumps(measured))
    if args.ingest:
        results["ingest"] = ingest_speed(args.ingest)
        print("ingest", json.dumps(results["ingest"]))
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
