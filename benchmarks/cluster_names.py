"""Cluster names side by side: today's c-TF-IDF word lists against the names a person would write.

Three real corpora, each embedded by the bundled model (vectors cached in
``benchmarks/.cache/``) and clustered once by the app's ``compute`` (``auto``:
k-means with k by silhouette, PCA map, the tree of levels):

- ``postgresql``: Debian's PostgreSQL manual, every HTML page
  (``/usr/share/doc/postgresql-doc-*/html``), read by the app's HTML reader
  (its ``<title>`` is the document's title);
- ``git``: the Git manual pages (``/usr/share/doc/git-doc/*.html``), the same way;
- ``trec``: the 5,452 TREC questions (``../shared/data/trec-qc``), no titles
  (a question's first line is itself), with their 6 coarse and 50 fine gold classes.

Each level of each clustering is named twice from the same clusters and the
same naming sample: by today's naming (``searchapp/clusters/naming.py`` as of
``BASE``, read with ``git show`` and run as it was: top c-TF-IDF words and
two-word phrases joined by commas) and by the new one (``clusters.names``).
Measured per naming, over every level:

- ``word_lists``: names that are lists of three or more terms of one or two words
  ("use, database, type");
- ``cluster_n``: names that are, or end with, "cluster N";
- ``duplicates``: names that read like a sibling's (the same words, any form or order);
- ``words``: the mean number of words per name;
- ``contrast``: the mean, over clusters, of the share of its members whose text holds
  every content word of its name minus the share of the other documents that do:
  high when the name says what the cluster has and the others lack;
- TREC only, ``gold_overlap``: the share of clusters of the chosen level whose name shares
  a word with the top c-TF-IDF words of its members' most common gold class (coarse and
  fine classes, each class's words against the other classes'), and ``gold_precision``: the
  mean share of a name's content words among those words (length is no advantage there).

Run:   PYTHONPATH=. python benchmarks/cluster_names.py [postgresql] [git] [trec] [--limit N]
Writes benchmarks/results/cluster_names.json and cluster_names.md (side-by-side tables).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from searchapp.clusters import ClusterParams, compute  # noqa: E402
from searchapp.clusters.names import words_of  # noqa: E402
from searchapp.clusters.naming import (  # noqa: E402
    _stop_words,
    central_members,
    naming_rows,
)
from searchapp.clusters.wordforms import stems  # noqa: E402
from searchapp.vectors.index import VectorIndex  # noqa: E402

BASE = "06edce8"  # the main commit whose naming is "today's"
RESULTS = ROOT / "benchmarks" / "results"
CACHE = ROOT / "benchmarks" / ".cache"
EMBED_CHARS = 2_000  # of a manual page embedded: its start says what it is about
WORD_LIST = re.compile(r"[\w-]+(?: [\w-]+)?(?:, [\w-]+(?: [\w-]+)?){2,}(?: \(.*\))?")
SHOWN = 12  # clusters per level shown side by side in the markdown


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- corpora ------------------------------------------------------------------------------
def html_corpus(pattern: str, limit: int | None) -> tuple[list[str], list[str]]:
    """(texts, titles) of the HTML pages matching ``pattern``, read by the app's reader;
    with ``limit``, that many pages evenly spread over the sorted list."""
    from searchapp.intake.formats.html import read_html

    paths = sorted(glob.glob(pattern))
    if limit and limit < len(paths):
        paths = [paths[i] for i in np.linspace(0, len(paths) - 1, limit).astype(int)]
    texts, titles = [], []
    for path in paths:
        for doc in read_html(path, Path(path).name):
            if doc.text.strip():
                texts.append(doc.text)
                titles.append(doc.meta.get("title", ""))
    return texts, titles


def trec_corpus(limit: int | None):
    from sentence_cache import trec_questions

    df = trec_questions()
    return df.iloc[:limit] if limit else df


def embed(name: str, texts: list[str]) -> np.ndarray:
    """The bundled model's vectors of ``texts`` (their first ``EMBED_CHARS``), cached."""
    key = hashlib.sha1("\x00".join(t[:EMBED_CHARS] for t in texts).encode()).hexdigest()[:12]
    path = CACHE / f"cluster_names_{name}_{key}.npy"
    if path.exists():
        return np.load(path)
    from searchapp.embedding.encoder import SiameseEncoder
    from searchapp.embedding.models import BUNDLED

    started = time.perf_counter()
    encoder = SiameseEncoder.load(BUNDLED["all-MiniLM-L6-v2"](), device="cpu")
    vectors = encoder.encode([t[:EMBED_CHARS] for t in texts]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12)
    CACHE.mkdir(exist_ok=True)
    np.save(path, vectors)
    log(f"{name}: embedded {len(texts)} texts in {time.perf_counter() - started:.0f} s")
    return vectors


# ---- today's naming, as it was --------------------------------------------------------------
def todays_naming() -> types.ModuleType:
    """``searchapp/clusters/naming.py`` as of ``BASE``, loaded as a module of its own."""
    source = subprocess.run(["git", "-C", str(ROOT), "show",
                             f"{BASE}:searchapp/clusters/naming.py"],
                            check=True, capture_output=True, text=True).stdout
    module = types.ModuleType("todays_naming")
    exec(compile(source, "todays_naming.py", "exec"), module.__dict__)
    return module


# ---- measures -------------------------------------------------------------------------------
class StemSets:
    """Each document's words as a set of stems: what ``contrast`` looks names up in."""

    def __init__(self, texts: list[str]) -> None:
        token = re.compile(r"(?u)\w+(?:-\w+)*")
        self.sets = [set().union(*(stems(w) for w in {t.lower() for t in token.findall(text)}))
                     for text in texts]

    def holding(self, words: list[str]) -> np.ndarray:
        """Which documents hold a form of every word."""
        wanted = [stems(w) for w in words]
        return np.array([all(s & doc for s in wanted) for doc in self.sets])


def content_words(name: str) -> list[str]:
    stop = _stop_words()
    return [w for w in words_of(name.replace("…", "")) if w not in stop and not w.isdigit()
            and not re.fullmatch(r"cluster|\d+", w)]


def contrast(names: dict[int, str], assign: np.ndarray, docs: StemSets) -> float:
    """Mean over clusters of (share of members holding the name's words − share of others)."""
    out = []
    for c, name in names.items():
        words = content_words(name)
        if not words:
            out.append(0.0)
            continue
        held = docs.holding(words)
        inside = assign == c
        out.append(float(held[inside].mean() - (held[~inside].mean() if (~inside).any() else 0)))
    return round(float(np.mean(out)), 3) if out else 0.0


def alike_duplicates(names: list[str]) -> int:
    """Names that read like an earlier sibling's (the same words, any form or order)."""
    seen: list[frozenset] = []
    dupes = 0
    for name in names:
        key = frozenset(min(stems(w)) for w in words_of(name))
        dupes += key in seen
        seen.append(key)
    return dupes


def summary(levels: list[list[str]], contrasts: list[float]) -> dict:
    flat = [n for level in levels for n in level]
    return {"names": len(flat),
            "word_lists": round(sum(bool(WORD_LIST.fullmatch(n)) for n in flat) / len(flat), 3),
            "cluster_n": sum(bool(re.search(r"\bcluster \d+\)?$", n)) for n in flat),
            "duplicates": sum(alike_duplicates(level) for level in levels),
            "words": round(float(np.mean([len(words_of(n)) for n in flat])), 2),
            "contrast": round(float(np.mean(contrasts)), 3)}


def gold_overlap(names: dict[int, str], assign: np.ndarray, gold: np.ndarray,
                 class_words: dict[str, set]) -> tuple[float, float]:
    """Share of clusters whose name shares a word (any form) with its majority class's words,
    and the mean share of a name's content words that are among them (a list of four words
    has four chances to share one: the second number does not reward length)."""
    hits, precision = [], []
    for c, name in names.items():
        members = gold[assign == c]
        if not len(members):
            continue
        values, counts = np.unique(members, return_counts=True)
        top = class_words[values[np.argmax(counts)]]
        words = content_words(name)
        own = set().union(*(stems(w) for w in words))
        hits.append(bool(own & top))
        precision.append(np.mean([bool(stems(w) & top) for w in words]) if words else 0.0)
    return round(float(np.mean(hits)), 3), round(float(np.mean(precision)), 3)


def typical_words(texts: list[str], gold: np.ndarray, naming, n: int = 10) -> dict[str, set]:
    """Each gold class's top ``n`` c-TF-IDF words (single words), as stem sets."""
    classes, codes = np.unique(gold, return_inverse=True)
    counts, terms = naming.term_counts(texts)
    ranked = naming.ctfidf_from_counts(counts, terms, codes, top_n=60)
    return {str(classes[c]): set().union(*(stems(t) for t in
                                            [t for t in ranked[c] if " " not in t][:n]))
            for c in ranked}


# ---- one corpus -------------------------------------------------------------------------------
def run_corpus(name: str, texts: list[str], titles: list[str], vectors: np.ndarray,
               gold: dict[str, np.ndarray] | None = None) -> dict:
    old = todays_naming()
    index = VectorIndex(vectors.shape[1], capacity=len(vectors))
    index.add(np.arange(len(vectors)), vectors)
    from searchapp.clusters.names import title_of

    started = time.perf_counter()
    out = compute(index, ClusterParams("auto", projection="pca"),
                  lambda ids: [texts[int(i)] for i in ids],
                  titles_of=lambda ids: [title_of(titles[int(i)], texts[int(i)]) for i in ids])
    seconds = round(time.perf_counter() - started, 1)
    log(f"{name}: {len(texts)} documents, {out['params']['k']} clusters in {seconds} s")
    assign = out["assign"]
    rows = naming_rows(assign)
    old_counts, old_terms = old.term_counts([texts[int(i)] for i in out["ids"][rows]])
    docs = StemSets(texts)
    leaf, levels = out["leaf"], []
    vectors_in_order = vectors[out["ids"]]
    for level, cut in zip(out["levels"], out["cuts"], strict=True):
        level_assign = np.where(leaf >= 0, cut[np.maximum(leaf, 0)], -1)
        central = central_members(vectors_in_order, level_assign)
        words = old.ctfidf_from_counts(old_counts, old_terms, level_assign[rows])
        before = old.cluster_labels({c: words.get(c, []) for c in central})
        after = {c["id"]: c["label"] for c in level["clusters"]}
        levels.append({"count": level["count"], "assign": level_assign, "before": before,
                       "after": after, "sizes": {c["id"]: c["size"] for c in level["clusters"]},
                       "titles": {c: title_of(titles[int(out['ids'][central[c][0]])],
                                              texts[int(out['ids'][central[c][0]])])
                                  for c in central}})
    report = {"documents": len(texts), "k": out["params"]["k"], "seconds": seconds,
              "levels": [lv["count"] for lv in levels]}
    for side in ("before", "after"):
        report[side] = summary([list(lv[side].values()) for lv in levels],
                               [contrast(lv[side], lv["assign"], docs) for lv in levels])
    chosen = next(lv for lv in levels if lv["count"] == out["level"])
    if gold:
        for truth, labels in gold.items():
            ordered = labels[out["ids"]]
            class_words = typical_words([texts[int(i)] for i in out["ids"]], ordered, old)
            for side in ("before", "after"):
                hit, precise = gold_overlap(chosen[side], chosen["assign"], ordered, class_words)
                report[side][f"gold_overlap_{truth}"] = hit
                report[side][f"gold_precision_{truth}"] = precise
    report["side_by_side"] = [
        {"count": lv["count"],
         "clusters": [{"id": c, "size": lv["sizes"][c], "before": lv["before"][c],
                       "after": lv["after"][c], "central_title": lv["titles"][c]}
                      for c in sorted(lv["after"])]}
        for lv in levels if lv["count"] <= 2 * out["level"]]
    log(f"{name}: before {report['before']}")
    log(f"{name}: after  {report['after']}")
    return report


# ---- output ---------------------------------------------------------------------------------
def markdown(results: dict) -> str:
    lines = ["# Cluster names: today's word lists and the new names, side by side", "",
             "Written by `benchmarks/cluster_names.py` (see its docstring for the measures).", "",
             "| corpus | naming | names | word lists | \"cluster N\" | duplicates | words/name "
             "| contrast | gold overlap (coarse / fine) | gold precision (coarse / fine) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for corpus, r in results.items():
        for side in ("before", "after"):
            s = r[side]
            gold = (f"{s['gold_overlap_coarse']:.0%} / {s['gold_overlap_fine']:.0%} | "
                    f"{s['gold_precision_coarse']:.0%} / {s['gold_precision_fine']:.0%}"
                    if "gold_overlap_coarse" in s else " |")
            lines.append(f"| {corpus} | {'today' if side == 'before' else 'new'} | {s['names']} "
                         f"| {s['word_lists']:.0%} | {s['cluster_n']} | {s['duplicates']} "
                         f"| {s['words']} | {s['contrast']:.2f} | {gold} |")
    for corpus, r in results.items():
        lines += ["", f"## {corpus}: {r['documents']} documents, {r['k']} clusters "
                  f"(levels {', '.join(map(str, r['levels']))})"]
        for level in r["side_by_side"]:
            lines += ["", f"### {level['count']} clusters", "",
                      "| # | size | today | new | most central document's title |",
                      "|---:|---:|---|---|---|"]
            for c in level["clusters"][:SHOWN]:
                lines.append(f"| {c['id']} | {c['size']} | {_cell(c['before'])} "
                             f"| {_cell(c['after'])} | {_cell(c['central_title'])} |")
            if len(level["clusters"]) > SHOWN:
                lines.append(f"| … | | {len(level['clusters']) - SHOWN} more in the JSON | | |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", default=["postgresql", "git", "trec"])
    parser.add_argument("--limit", type=int, default=None,
                        help="documents per corpus (pages evenly spread; the first questions)")
    args = parser.parse_args()
    path = RESULTS / "cluster_names.json"
    results = json.loads(path.read_text()) if path.exists() else {}
    for corpus in args.corpora:
        if corpus == "trec":
            df = trec_corpus(args.limit)
            texts = df.text.tolist()
            gold = {"coarse": df.coarse.to_numpy(), "fine": df.fine.to_numpy()}
            results[corpus] = run_corpus(corpus, texts, [""] * len(texts),
                                         embed(corpus, texts), gold)
            continue
        pattern = ("/usr/share/doc/postgresql-doc-*/html/*.html" if corpus == "postgresql"
                   else "/usr/share/doc/git-doc/*.html")
        texts, titles = html_corpus(pattern, args.limit)
        results[corpus] = run_corpus(corpus, texts, titles, embed(corpus, texts))
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n")
    (RESULTS / "cluster_names.md").write_text(markdown(results))
    log(f"wrote {path} and cluster_names.md")


if __name__ == "__main__":
    main()
