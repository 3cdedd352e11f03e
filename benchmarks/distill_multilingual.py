"""Multilingual knowledge distillation (Reimers & Gurevych 2020) into the USE-m3 network, measured.

Issue 48's second route. Student: the ``use-multilingual-v3`` network on torch
(``searchapp.embedding.use_network.UseNetwork``, its uint8 piece table frozen, the CNN, layer
norms and DAN trained) followed by a linear projection 512→384, initialised by least squares
from USE vectors to MiniLM vectors of the English training sentences. Teacher: the bundled
``all-MiniLM-L6-v2``. Loss: MSE(student(en), teacher(en)) + MSE(student(x), teacher(en)) over
parallel pairs (en, x), x in de/fr/es/ja, so English keeps MiniLM's space and the other
languages are pulled into it.

Parallel text installed here (no internet):
- the message catalogues ``/usr/share/locale/{de,fr,es,ja}/LC_MESSAGES/*.mo`` (msgid English →
  msgstr; plural entries give their singular pair; untranslated, format-only and short
  strings dropped; a multi-line message whose two sides have the same number of lines is
  split into line pairs);
- translated manual pages of sections 2-8 (``/usr/share/man/{de,fr,es,ja}/man[2-8]``, paired
  with ``/usr/share/man/man[2-8]`` by file name): the NAME summary, and the first sentence of
  the DESCRIPTION.

Leakage: the evaluation is man1 (``benchmarks/languages.py``), and coreutils' catalogue holds the
``--help`` texts man1 pages are generated from. Every pair is dropped whose English or translated
side shares a 6-word window (NFKC, lower case, word characters) with any man1 page's text (every
section) in en/de/fr/es/ja, or (for text with CJK characters) a 12-character window of its
characters with spaces and punctuation removed, or equals a man1 NAME summary outright.

Evaluation: ``languages.py``'s collection (its loader, the same pages, seed and queries), each
system's vectors compared by brute-force cosine in numpy, MRR@10 with the app's bootstrap
interval (``searchapp.evaluation.bootstrap``). Hybrid: BM25 from the app's own lexical search
(a temporary SQLite data folder, ``search(mode="lexical")``) fused with each system's semantic
ranking by the app's ``searchapp.search.fusion.rrf_scores`` with the default fusion (an
estimate: the app's hybrid also weighs passages of split documents; the MiniLM and USE rows
can be checked against ``benchmarks/results/languages.json``, which ran through the app).

Run (each step caches under /tmp/distill48; OMP_NUM_THREADS=1 keeps to one core):
    OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python \
        benchmarks/distill_multilingual.py data|teacher|train|eval [--minutes 25]
Writes benchmarks/results/distill_multilingual.json (eval) and, when the student wins,
/work/distilled/ (its trained tensors in float16 and how they were made).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import struct
import sys
import time
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import languages as L  # noqa: E402  (the benchmark's loader: same pages, seed, queries)

CACHE = Path("/tmp/distill48")
RESULT = ROOT / "benchmarks" / "results" / "distill_multilingual.json"
OUT_DIR = Path("/work/distilled")
LANGS = ("de", "fr", "es", "ja")
LOCALE = Path("/usr/share/locale")
MAN = Path("/usr/share/man")
WORDS = 6  # leakage window in words
CJK_CHARS = 12  # leakage window in characters (CJK text)
MIN_WORDS = 3  # English side: at least this many words
MAX_CHARS = 400  # either side: at most this many characters
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]")
FORMAT = re.compile(r"%(\d+\$)?[-+ #0']*\d*(\.\d+)?(hh|h|ll|l|L|q|j|z|t)?[a-zA-Z%]|\{[^}]*\}"
                    r"|\$\{?\w+\}?|<[^>]+>")
TRAINED = ("proj_w", "proj_b", "ln1_g", "ln1_b", "ln2_g", "ln2_b", "cnn_w", "cnn_b",
           "d0", "d1", "d2", "d3", "p1", "p3") + tuple(
    f"{w}{layer}_{n}" for n in (2, 3, 5) for layer in (1, 2) for w in ("w", "b"))


# ---- parallel text ------------------------------------------------------------------------
def read_mo(path: Path) -> list[tuple[str, str]]:
    """(msgid, msgstr) of a GNU .mo file; a plural entry gives (singular, first form)."""
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    endian = "<" if magic == 0x950412DE else ">"
    _, count, originals, translations = struct.unpack(endian + "4I", data[4:20])
    out = []
    for i in range(count):
        olen, ooff = struct.unpack(endian + "2I", data[originals + 8 * i:originals + 8 * i + 8])
        tlen, toff = struct.unpack(endian + "2I",
                                   data[translations + 8 * i:translations + 8 * i + 8])
        try:
            msgid = data[ooff:ooff + olen].decode("utf-8")
            msgstr = data[toff:toff + tlen].decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not msgid:
            continue  # the header
        msgid = msgid.split("\x04")[-1].split("\x00")[0]  # context, plural
        out.append((msgid, msgstr.split("\x00")[0]))
    return out


def clean(text: str) -> str:
    """A message's words: accelerators, format directives and markup out, spaces squeezed."""
    text = FORMAT.sub(" ", text).replace("_", "").replace("&", " ")
    text = re.sub(r"\s+", " ", text)
    return text.strip(" :.-\t")


def usable(en: str, x: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", en)
    return (len(words) >= MIN_WORDS and x and en != x and len(en) <= MAX_CHARS
            and len(x) <= MAX_CHARS)


def mo_pairs(lang: str) -> list[dict]:
    out = []
    for path in sorted((LOCALE / lang / "LC_MESSAGES").glob("*.mo")):
        for msgid, msgstr in read_mo(path):
            if not msgstr.strip():
                continue
            ens, xs = msgid.strip().split("\n"), msgstr.strip().split("\n")
            units = list(zip(ens, xs, strict=True)) if len(ens) == len(xs) else [(msgid, msgstr)]
            for en, x in units:
                en, x = clean(en), clean(x)
                if usable(en, x):
                    out.append({"en": en, "x": x, "lang": lang, "source": f"mo:{path.stem}"})
    return out


def first_sentence(text: str) -> str:
    m = re.search(r"(?<=[.。!?！？])\s", text)
    return (text[:m.start()] if m else text)[:MAX_CHARS]


def man_pages(folder: Path) -> dict[str, list[tuple[str, str]]]:
    """Sections of each page under ``folder`` (by section/file name)."""
    out = {}
    for path in sorted(folder.glob("man[2-8]/*.gz")):
        try:
            roff = gzip.decompress(path.read_bytes()).decode("utf-8")
        except (OSError, UnicodeDecodeError, EOFError):
            continue
        if roff.lstrip().startswith(".so"):
            continue
        out[f"{path.parent.name}/{path.name}"] = L._sections(roff)
    return out


def man_pairs(lang: str, english: dict) -> list[dict]:
    out = []
    for name, sections in man_pages(MAN / lang).items():
        if name not in english or not sections or not english[name]:
            continue
        en_secs, x_secs = english[name], sections
        en_sum = L.SUMMARY.split(en_secs[0][1], maxsplit=1)
        x_sum = L.SUMMARY.split(x_secs[0][1], maxsplit=1)
        if len(en_sum) == 2 and len(x_sum) == 2:
            out.append({"en": en_sum[1].strip(), "x": x_sum[1].strip(), "lang": lang,
                        "source": "man:name"})
        en_desc = [t for h, t in en_secs if h in L.DESCRIPTION]
        x_desc = [t for h, t in x_secs if h in L.DESCRIPTION]
        if en_desc and x_desc:
            en, x = first_sentence(en_desc[0]), first_sentence(x_desc[0])
            if usable(en, x):
                out.append({"en": en, "x": x, "lang": lang, "source": "man:description"})
    return [p for p in out if len(p["en"]) >= 3 and p["x"]]


def normal(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def shingles(text: str) -> set:
    text = normal(text)
    words = re.findall(r"\w+", text)
    out = {" ".join(words[i:i + WORDS]) for i in range(len(words) - WORDS + 1)}
    if CJK.search(text):
        compact = "".join(re.findall(r"\w", text))
        out |= {compact[i:i + CJK_CHARS] for i in range(len(compact) - CJK_CHARS + 1)}
    return out


def man1_texts() -> tuple[set, set]:
    """Every man1 page's windows (all sections, five languages) and its NAME summaries."""
    windows, summaries = set(), set()
    for folder in L.FOLDERS.values():
        for path in sorted(folder.glob("*.gz")):
            try:
                roff = gzip.decompress(path.read_bytes()).decode("utf-8")
            except (OSError, UnicodeDecodeError, EOFError):
                continue
            sections = L._sections(roff)
            for _, text in sections:
                windows |= shingles(text)
            if sections:
                parts = L.SUMMARY.split(sections[0][1], maxsplit=1)
                summaries.add(" ".join(re.findall(r"\w+", normal(parts[-1]))))
    return windows, summaries


def leaks(text: str, windows: set, summaries: set) -> bool:
    return (" ".join(re.findall(r"\w+", normal(text))) in summaries
            or not shingles(text).isdisjoint(windows))


def step_data(_args) -> None:
    started = time.perf_counter()
    english = man_pages(MAN)
    pairs = []
    for lang in LANGS:
        pairs += mo_pairs(lang) + man_pairs(lang, english)
    seen, unique = set(), []
    for p in pairs:
        key = (p["en"], p["x"], p["lang"])
        if key not in seen:
            seen.add(key)
            unique.append(p)
    windows, summaries = man1_texts()
    kept, dropped = [], {}
    for p in unique:
        if leaks(p["en"], windows, summaries) or leaks(p["x"], windows, summaries):
            key = f"{p['lang']} {p['source'].split(':')[0]}"
            dropped[key] = dropped.get(key, 0) + 1
        else:
            kept.append(p)
    counts = {}
    for p in kept:
        key = f"{p['lang']} {p['source'].split(':')[0]}"
        counts[key] = counts.get(key, 0) + 1
    CACHE.mkdir(exist_ok=True)
    (CACHE / "pairs.json").write_text(json.dumps(kept, ensure_ascii=False))
    stats = {"pairs_before_leakage_filter": len(unique), "dropped_by_leakage": dropped,
             "dropped_total": sum(dropped.values()), "kept": len(kept), "kept_by": counts,
             "man1_windows": len(windows), "seconds": round(time.perf_counter() - started, 1)}
    (CACHE / "data_stats.json").write_text(json.dumps(stats, indent=1))
    print(json.dumps(stats, indent=1))


# ---- teacher -------------------------------------------------------------------------------
def encoder(name: str):
    """A model as the app loads it (CPU, the app's default precision)."""
    import tempfile

    from searchapp.config import Settings
    from searchapp.embedding.models import load_encoder

    data = tempfile.mkdtemp(prefix="distill48-")
    return load_encoder(name, Settings.from_env({"SEARCHAPP_DATA_DIR": data,
                                                 "SEARCHAPP_DEVICE": "cpu"}))


def step_teacher(_args) -> None:
    """MiniLM's vectors of every English training sentence, once (cached)."""
    pairs = json.loads((CACHE / "pairs.json").read_text())
    english = sorted({p["en"] for p in pairs})
    started = time.perf_counter()
    vectors = encoder(L.BUNDLED).encode(english)
    np.save(CACHE / "teacher.npy", vectors.astype(np.float32))
    (CACHE / "teacher_texts.json").write_text(json.dumps(english, ensure_ascii=False))
    print(f"{len(english)} English sentences in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("step", choices=["data", "teacher", "train", "eval"])
    parser.add_argument("--minutes", type=float, default=25.0)
    args = parser.parse_args()
    globals()[f"step_{args.step}"](args)
