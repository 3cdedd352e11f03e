"""Which clustering finds the real groups without being told how many? NMI and ARI per set.

Labelled sets (the bundled model's vectors, cached in benchmarks/.cache/):

- ``trec``: 5,452 TREC questions, scored against their 6 coarse and 50 fine classes
  (the same vectors, two truths);
- ``stsb``: the ~15,500 unique STSb sentences, against their 9 sources and 3 genres;
- ``mixed``: both together, against one truth of 15 groups (the TREC coarse class or
  the STSb source): uneven group sizes and two kinds of text.

On each set, in one run, every method clusters the same vectors:

- ``k-means told the true k``: the app's k-means (``method=kmeans``) with the
  number of classes of that truth: the reference the default must reach (≥ 95%
  of its NMI);
- ``auto`` (the new default): k-means with k chosen by silhouette over a sweep
  (the fewest clusters within 5% of the best score), and the levels of its
  hierarchy (``searchapp.clusters.hierarchy``); beside it k-means at the k of the
  best silhouette itself;
- ``ward gap``: a Ward tree over 200 k-means centroids cut where the merge
  cost jumps most (the distance-gap criterion), a candidate for the default;
- ``hdbscan``: the app's HDBSCAN (on a 5-D PCA reduction here: UMAP takes
  minutes on two busy cores), as is, and with its outliers assigned to the
  nearest cluster centre;
- ``community``: the old default (community detection, threshold 0.4);
- ``TF-IDF + k-means (true k)``: a text-only peer.

Each row: NMI and ARI over all documents (outliers count as one group),
the number of clusters, the largest cluster's share (a catch-all shows
here), the outlier share and seconds.

Run: PYTHONPATH=. OMP_NUM_THREADS=1 nice python benchmarks/clusters_quality.py [trec] [stsb] [mixed]
Writes benchmarks/results/clusters_quality.json and .md (the sets run are replaced).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
from sentence_cache import stsb_vectors, trec_vectors
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from searchapp.clusters import ClusterParams, compute
from searchapp.clusters.algorithms import by_size
from searchapp.clusters.hierarchy import ward_merges
from searchapp.vectors.index import VectorIndex

RESULTS = Path(__file__).resolve().parent / "results"
GENRE = {"MSRpar": "news", "headlines": "news", "deft-news": "news", "images": "captions",
         "MSRvid": "captions", "track5.en-en": "captions", "answers-forums": "forums",
         "deft-forum": "forums", "answer-answer": "forums"}


def scores(truth: np.ndarray, found: np.ndarray) -> dict:
    clustered = found >= 0
    sizes = np.unique(found[clustered], return_counts=True)[1]
    return {"nmi": round(float(normalized_mutual_info_score(truth, found)), 4),
            "ari": round(float(adjusted_rand_score(truth, found)), 4),
            "clusters": len(sizes),
            "largest_cluster_share": round(float(sizes.max() / len(found)), 4) if len(sizes)
            else 0.0,
            "outlier_share": round(float(1 - clustered.mean()), 4)}


def labelled_sets(names: list[str]) -> dict[str, tuple]:
    """{set: (texts, vectors, {truth name: labels})}."""
    out = {}
    quiet = lambda m: print(m, flush=True)  # noqa: E731
    trec, trec_v = trec_vectors(quiet) if {"trec", "mixed"} & set(names) else (None, None)
    stsb, stsb_v = stsb_vectors(quiet) if {"stsb", "mixed"} & set(names) else (None, None)
    if "trec" in names:
        out["trec"] = (trec.text.tolist(), trec_v, {"trec-6": trec.coarse.to_numpy(),
                                                   "trec-50": trec.fine.to_numpy()})
    if "stsb" in names:
        out["stsb"] = (stsb.text.tolist(), stsb_v,
                       {"stsb-source": stsb.source.to_numpy(),
                        "stsb-genre": stsb.source.map(GENRE).to_numpy()})
    if "mixed" in names:
        truth = np.concatenate([("trec:" + trec.coarse).to_numpy(), stsb.source.to_numpy()])
        out["mixed"] = (trec.text.tolist() + stsb.text.tolist(),
                        np.concatenate([trec_v, stsb_v]), {"mixed-15": truth})
    return out


def nearest_centre(vectors: np.ndarray, found: np.ndarray) -> np.ndarray:
    """Outliers (-1) assigned to the cluster whose mean direction is closest (cosine)."""
    ids = np.unique(found[found >= 0])
    if len(ids) == 0:
        return found
    centres = np.stack([vectors[found == c].mean(axis=0) for c in ids])
    out = found.copy()
    lost = np.flatnonzero(found < 0)
    out[lost] = ids[np.argmax(vectors[lost] @ centres.T, axis=1)]
    return out


def ward_gap(vectors: np.ndarray, leaves: int = 200, most: int = 60) -> np.ndarray:
    """Ward over k-means centroids, cut before the biggest jump in merge cost (2..most)."""
    km = KMeans(n_clusters=min(leaves, len(vectors) // 5), n_init=1, random_state=0).fit(vectors)
    merges = ward_merges(km.cluster_centers_, np.bincount(km.labels_))
    costs = np.array([c for _, _, c in merges])
    m = len(costs) + 1  # clusters left after merge i: m - 1 - i
    counts = m - 1 - np.arange(len(costs))  # clusters after each merge
    # The jump from merge i-1 to i: stop before merge i, leaving counts[i-1] clusters.
    ratio = costs[1:] / np.maximum(costs[:-1], 1e-12)
    allowed = (counts[:-1] >= 2) & (counts[:-1] <= most)
    stop = int(np.argmax(np.where(allowed, ratio, -np.inf))) + 1
    parent = np.arange(m)

    def root(x: int) -> int:
        while parent[x] != x:
            x = parent[x]
        return x

    for a, b, _ in merges[:stop]:
        parent[root(b)] = root(a)
    roots = np.array([root(i) for i in range(m)])
    return by_size(np.unique(roots, return_inverse=True)[1][km.labels_])


def run_set(name: str, texts: list[str], vectors: np.ndarray, truths: dict, runs: list) -> None:
    index = VectorIndex(vectors.shape[1], capacity=len(vectors))
    index.add(np.arange(len(vectors)), vectors)

    def texts_of(ids: np.ndarray) -> list[str]:
        return [texts[int(i)] for i in ids]

    def record(method: str, truth_name: str, found: np.ndarray, seconds: float, **extra) -> None:
        row = {"set": name, "truth": truth_name, "method": method, "seconds": round(seconds, 2),
               **scores(truths[truth_name], found), **extra}
        runs.append(row)
        print(json.dumps(row), flush=True)

    def timed(fn):
        started = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - started

    print(f"{name}: {len(texts):,} documents", flush=True)
    for truth_name, truth in truths.items():
        k = len(np.unique(truth))
        out, s = timed(lambda k=k: compute(index, ClusterParams("kmeans", k=k, projection="pca"),
                                           texts_of))
        record(f"k-means told the true k ({k})", truth_name, out["assign"], s, reference=True)
        found, s = timed(lambda k=k: TfidfVectorizer(stop_words="english", sublinear_tf=True,
                                                     min_df=2).fit_transform(texts))
        labels, s2 = timed(lambda k=k, m=found: KMeans(n_clusters=k, n_init=3, random_state=0)
                           .fit_predict(m))
        record(f"TF-IDF + k-means told the true k ({k})", truth_name, labels, s + s2)
    out, s = timed(lambda: compute(index, ClusterParams("auto", projection="pca"), texts_of))
    silhouettes = out["silhouettes"]
    best = max(silhouettes, key=silhouettes.get)
    argmax, s_best = timed(lambda: compute(index, ClusterParams("kmeans", k=best,
                                                                projection="pca"), texts_of))
    for truth_name in truths:
        record(f"auto (new default): k={out['params']['k']}, fewest within 5% of the best "
               "silhouette", truth_name, out["assign"], s, default=True,
               silhouettes=silhouettes)
        record(f"k-means, k={best}: the best silhouette", truth_name, argmax["assign"], s_best)
    for truth_name in truths:
        for level in out["levels"]:
            m = level["count"]
            cut = out["cuts"][[lv["count"] for lv in out["levels"]].index(m)]
            found = np.where(out["leaf"] >= 0, cut[np.maximum(out["leaf"], 0)], -1)
            record(f"auto, hierarchy level {m}", truth_name, found, 0.0, level=m)
    found, s = timed(lambda: ward_gap(vectors))
    for truth_name in truths:
        record("Ward over 200 centroids, largest gap", truth_name, found, s)
    out, s = timed(lambda: compute(index, ClusterParams("hdbscan", projection="pca"), texts_of))
    assigned = nearest_centre(vectors, out["assign"])
    min_size = out["params"]["min_size"]
    for truth_name in truths:
        record(f"HDBSCAN (min_size={min_size}, 5-D PCA)", truth_name, out["assign"], s)
        record(f"HDBSCAN, outliers to nearest cluster (min_size={min_size})", truth_name,
               assigned, s)
    out, s = timed(lambda: compute(index, ClusterParams("community", projection="pca"),
                                   texts_of))
    for truth_name in truths:
        record("community (old default, threshold 0.4)", truth_name, out["assign"], s)


def ratios(runs: list[dict]) -> None:
    """Each row's NMI as a share of k-means told the true k on the same truth."""
    reference = {r["truth"]: r["nmi"] for r in runs if r.get("reference")}
    for r in runs:
        r["nmi_vs_true_k"] = round(r["nmi"] / reference[r["truth"]], 3) \
            if reference.get(r["truth"]) else None


def table(runs: list[dict]) -> list[str]:
    lines = ["| truth | method | NMI | ARI | NMI ÷ k-means (true k) | clusters | largest cluster "
             "| outliers | s |", "|" + "---|" * 9]
    for r in runs:
        lines.append(f"| {r['truth']} | {r['method']} | {r['nmi']:.3f} | {r['ari']:.3f} | "
                     f"{r['nmi_vs_true_k']:.2f} | {r['clusters']} | "
                     f"{r['largest_cluster_share']:.1%} | {r['outlier_share']:.1%} | "
                     f"{r['seconds']} |")
    return lines


def main() -> None:
    names = [a for a in sys.argv[1:] if not a.startswith("-")] or ["trec", "stsb", "mixed"]
    path = RESULTS / "clusters_quality.json"
    old = json.loads(path.read_text()) if path.is_file() else {}
    runs = [r for r in old.get("runs", []) if r.get("set") and r["set"] not in names]
    for name, (texts, vectors, truths) in labelled_sets(names).items():
        run_set(name, texts, vectors, truths, runs)
    ratios(runs)
    RESULTS.mkdir(exist_ok=True)
    result = {"benchmark": "clusters_quality", "model": "all-MiniLM-L6-v2", "runs": runs,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    path.write_text(json.dumps(result, indent=2) + "\n")
    lines = table(runs)
    (RESULTS / "clusters_quality_table.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
