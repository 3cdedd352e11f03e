"""Which sentence splitter answers use: boundary F1 on a hand-cut gold set, and speed.

Candidates (each a "prose engine": where sentences start inside running text), each run two
ways: **structure**, inside ``searchapp.embedding.sentences`` (lines read first: headings,
list items, table rows and code lines are units of their own, wrapped lines joined, then the
engine cuts the prose, long units capped), and **raw**, the engine alone on the whole text:

- ``rules``: ``searchapp.embedding.sentence_ends`` (this repo; stop + space + capital, with
  abbreviation, number and caption guards);
- ``passages-regex``: the passages' old ``sentence_starts`` (``_SENTENCE_END``; raw, it also
  cuts at every line break, which is what it was made for);
- ``pysbd`` 0.3.4 (MIT), ``syntok`` 1.4.4 (MIT), ``blingfire`` 0.1.8 (MIT; a 42 MB wheel).

Quality: boundary precision, recall and F1 against ``benchmarks/data/sentence_gold.txt``
(format in its header; passages picked by ``benchmarks/sentence_gold_pick.py``'s rule before
any splitter ran; 201 units; the structure rules were tuned while looking at its errors) and
``benchmarks/data/sentence_gold_heldout.txt`` (184 units, same rule over another order of the
files, cut by hand after the rules were written). Per source, F1 in brackets: git-doc,
Debian FAQ, PostgreSQL HTML. A boundary is where a unit other than a text's first starts; a
predicted one counts when a gold unit starts at the same character. Micro-averaged over all
texts, and per source.

Speed: MB/s (UTF-8 bytes of input per second, one process, one core) on the whole text of
``/usr/share/doc/git-doc/*.txt`` (about 3 MB), file by file, best of ``--repeat`` runs.

The libraries are not the app's dependencies; install them apart to measure them:
    .venv/bin/pip install --target /tmp/sbd-libs pysbd==0.3.4 syntok==1.4.4 blingfire==0.1.8
Run:  PYTHONPATH=.:/tmp/sbd-libs .venv/bin/python benchmarks/sentence_split.py
Writes benchmarks/results/sentence_split.json and prints the table.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import time
from collections.abc import Callable
from importlib import metadata
from itertools import pairwise
from pathlib import Path

from searchapp.embedding import passages, sentence_ends, sentences

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "benchmarks" / "data" / "sentence_gold.txt"
HELD_OUT = ROOT / "benchmarks" / "data" / "sentence_gold_heldout.txt"
OUT = ROOT / "benchmarks" / "results" / "sentence_split.json"
GIT_DOC = Path("/usr/share/doc/git-doc")
MARK = "\u2016"
LICENCES = {"pysbd": "MIT", "syntok": "MIT", "blingfire": "MIT"}


def read_gold(path: Path = GOLD) -> list[dict]:
    """[{source, cls, text, starts}] from the gold file: the marks taken out of the text."""
    raw = path.read_text(encoding="utf-8")
    parts = re.split(r"^%% (.*)\n", raw, flags=re.M)[1:]
    docs = []
    for head, body in zip(parts[0::2], parts[1::2], strict=True):
        body = body[:-1] if body.endswith("\n") else body
        text, starts = [], []
        for piece in body.split(MARK):
            starts.append(sum(map(len, text)))
            text.append(piece)
        source, cls = re.fullmatch(r"(\S+) \((.*)\)", head).groups()
        docs.append({"source": source, "cls": cls, "text": "".join(text),
                     "starts": set(starts[2:])})
    return docs


def engines() -> dict[str, tuple[Callable[[str], list[int]], str]]:
    """name -> (prose engine: sentence starts in a text, version); those not installed left
    out with a note."""
    out = {"rules": (sentence_ends.sentence_starts, "this repo"),
           "passages-regex": (passages.sentence_starts, "this repo")}
    try:
        import pysbd
        seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
        out["pysbd"] = (lambda t: [s.start for s in seg.segment(t)], metadata.version("pysbd"))
    except ImportError:
        print("pysbd not installed: left out")
    try:
        import syntok.segmenter as syntok
        out["syntok"] = (lambda t: [s[0].offset for p in syntok.analyze(t) for s in p if s],
                         metadata.version("syntok"))
    except ImportError:
        print("syntok not installed: left out")
    try:
        import blingfire
        out["blingfire"] = (lambda t: [a for a, _ in blingfire.text_to_sentences_and_offsets(t)[1]]
                            if t.strip() else [], metadata.version("blingfire"))
    except ImportError:
        print("blingfire not installed: left out")
    return out


def splitter(engine: Callable[[str], list[int]], mode: str
             ) -> Callable[[str], list[tuple[int, int]]]:
    """Text -> sentence spans: the engine inside the structure handling, or raw."""
    if mode == "structure":
        return lambda text: sentences.sentence_spans(text, cut=engine)

    def raw(text: str) -> list[tuple[int, int]]:
        spans = []
        for a, b in pairwise([*sorted({0, *(i for i in engine(text) if 0 < i < len(text))}),
                              len(text)]):
            piece = text[a:b]
            lead = len(piece) - len(piece.lstrip())
            if piece.strip():
                spans.append((a + lead, a + len(piece.rstrip())))
        return spans
    return raw


def score(split: Callable[[str], list[tuple[int, int]]], docs: list[dict]) -> dict:
    """Boundary precision/recall/F1, all texts and per source."""
    counts: dict[str, list[int]] = {}
    for doc in docs:
        predicted = {a for a, _ in split(doc["text"])[1:]}
        gold = doc["starts"]
        key = doc["source"].split("/")[0].split(".")[0]
        for name in ("all", key):
            c = counts.setdefault(name, [0, 0, 0])
            c[0] += len(predicted & gold)
            c[1] += len(predicted)
            c[2] += len(gold)
    return {name: _prf(*c) for name, c in counts.items()}


def _prf(tp: int, predicted: int, gold: int) -> dict:
    p = tp / predicted if predicted else 0.0
    r = tp / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": round(p, 4), "recall": round(r, 4), "f1": round(f, 4),
            "tp": tp, "predicted": predicted, "gold": gold}


def speed(split: Callable[[str], list[tuple[int, int]]], texts: list[str], repeat: int
          ) -> float:
    """MB/s of UTF-8 input, best of ``repeat`` passes over all texts."""
    size = sum(len(t.encode("utf-8")) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        for text in texts:
            split(text)
        best = min(best, time.perf_counter() - started)
    return size / 1e6 / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=2, help="speed passes (best kept)")
    parser.add_argument("--only", default="", help="comma-separated engines to run")
    args = parser.parse_args()
    sets = {"dev": read_gold(GOLD), "held-out": read_gold(HELD_OUT)}
    texts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted(GIT_DOC.glob("*.txt"))]
    rows = []
    for name, (engine, version) in engines().items():
        if args.only and name not in args.only.split(","):
            continue
        for mode in ("structure", "raw"):
            split = splitter(engine, mode)
            quality = {name: score(split, docs) for name, docs in sets.items()}
            rows.append({"engine": name, "version": version, "mode": mode,
                         "licence": LICENCES.get(name, "this repo"), "quality": quality,
                         "mb_per_s": round(speed(split, texts, args.repeat), 3)})
            _print_row(rows[-1])
    OUT.write_text(json.dumps({
        "gold": {name: {"texts": len(docs), "units": sum(len(d["starts"]) + 1 for d in docs),
                        "boundaries": sum(len(d["starts"]) for d in docs)}
                 for name, docs in sets.items()},
        "speed_input": {"files": len(texts), "mb": round(sum(len(t.encode()) for t in texts)
                                                          / 1e6, 3)},
        "max_sentence_chars": sentences.MAX_SENTENCE_CHARS,
        "machine": {"python": platform.python_version(), "cpu": platform.processor()
                    or platform.machine()},
        "rows": rows}, indent=1) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


def _print_row(row: dict) -> None:
    cells = []
    for name, q in row["quality"].items():
        per = " ".join(f"{q[k]['f1']:.3f}" for k in ("git-doc", "debian-faq", "postgresql"))
        cells.append(f"{name}: P {q['all']['precision']:.3f} R {q['all']['recall']:.3f} "
                     f"F1 {q['all']['f1']:.3f} ({per})")
    print(f"{row['engine']:<15} {row['mode']:<9} {'  '.join(cells)}  "
          f"{row['mb_per_s']:6.2f} MB/s", flush=True)


if __name__ == "__main__":
    main()
