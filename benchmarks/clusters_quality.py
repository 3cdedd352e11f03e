"""Do our clusters find the sources of the STSb sentences? NMI and ARI against a peer.

The ~15,500 unique STSb sentences come from 9 sources (MSRpar, headlines,
images, MSRvid, answers-forums, ...) in 3 genres (news, captions, forums).
Each method clusters the bundled model's vectors with the same code as the
``clusters`` job (``searchapp.clusters.compute`` over a VectorIndex); the peer
is TF-IDF + k-means on the raw text, computed in the same run, with the same
number of clusters as each of ours (k-means: k = the number of classes;
HDBSCAN and communities: as many as they found).

Agreement with the source is measured two ways: over all sentences (outliers
count as one extra group, so a method is not rewarded for leaving out hard
sentences) and over the clustered sentences only (with the share clustered).
For methods that leave outliers, the peer is also scored on exactly the
sentences ours clustered ("same sentences"), so both are judged on the same
documents. Homogeneity (does each cluster hold one source?) is reported too:
ARI and NMI also ask that each source sit in one cluster, which many small
topical clusters cannot do, while homogeneity asks only that clusters be pure.
The share of the largest cluster shows where ARI comes from: a catch-all
cluster holding most of the two biggest sources scores well on ARI alone.

Run: PYTHONPATH=. nice python benchmarks/clusters_quality.py
Writes benchmarks/results/clusters_quality.json and .md.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from sentence_cache import stsb_vectors
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import adjusted_rand_score, homogeneity_score, normalized_mutual_info_score

from searchapp.clusters import ClusterParams, compute
from searchapp.vectors.index import VectorIndex

RESULTS = Path(__file__).resolve().parent / "results"


def scores(truth: np.ndarray, found: np.ndarray) -> dict:
    clustered = found >= 0
    return {
        "nmi": round(float(normalized_mutual_info_score(truth, found)), 4),
        "ari": round(float(adjusted_rand_score(truth, found)), 4),
        "nmi_clustered": round(float(normalized_mutual_info_score(truth[clustered],
                                                                  found[clustered])), 4),
        "ari_clustered": round(float(adjusted_rand_score(truth[clustered], found[clustered])), 4),
        "homogeneity": round(float(homogeneity_score(truth, found)), 4),
        "clustered_share": round(float(clustered.mean()), 4),
        "clusters": len(np.unique(found[clustered])),
        # ARI rewards one catch-all cluster holding the biggest sources together
        "largest_cluster_share": round(float(np.unique(found[clustered], return_counts=True)[1]
                                             .max() / len(found)), 4),
        "ari_without_largest_cluster": _ari_without_largest(truth, found),
    }


def _ari_without_largest(truth: np.ndarray, found: np.ndarray) -> float:
    """ARI over the clustered sentences outside the largest cluster."""
    labels, counts = np.unique(found[found >= 0], return_counts=True)
    keep = (found >= 0) & (found != labels[counts.argmax()])
    return round(float(adjusted_rand_score(truth[keep], found[keep])), 4)


def tfidf_kmeans(texts: list[str], k: int) -> np.ndarray:
    """The peer: TF-IDF (English stop words, sublinear tf) + k-means with the same k."""
    matrix = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2).fit_transform(
        texts)
    return KMeans(n_clusters=k, n_init=3, random_state=0).fit_predict(matrix)


def main() -> None:
    frame, vectors = stsb_vectors(log=lambda m: print(m, flush=True))
    texts = frame.text.tolist()
    genre = frame.source.map(lambda s: {"MSRpar": "news", "headlines": "news",
                                        "deft-news": "news", "images": "captions",
                                        "MSRvid": "captions", "track5.en-en": "captions",
                                        "answers-forums": "forums", "deft-forum": "forums",
                                        "answer-answer": "forums"}[s])
    truths = {"source": frame.source.to_numpy(), "genre": genre.to_numpy()}
    index = VectorIndex(vectors.shape[1], capacity=len(vectors))
    index.add(np.arange(len(vectors)), vectors)

    def texts_of(ids: np.ndarray) -> list[str]:  # labels are row numbers here
        return [texts[int(i)] for i in ids]
    print(f"{len(texts):,} sentences; sources: {frame.source.value_counts().to_dict()}")

    runs: list[dict] = []

    def record(name: str, truth_name: str, found: np.ndarray, seconds: float,
               peer: dict | None = None) -> dict:
        row = {"method": name, "truth": truth_name, "seconds": round(seconds, 2),
               **scores(truths[truth_name], found)}
        if peer is not None:  # ours against the peer with the same number of clusters
            row["peer_nmi"], row["peer_ari"] = peer["nmi"], peer["ari"]
            row["peer_homogeneity"] = peer["homogeneity"]
            row["nmi_ratio_vs_peer"] = round(row["nmi"] / peer["nmi"], 2)
            row["ari_ratio_vs_peer"] = (round(row["ari"] / peer["ari"], 2)
                                        if peer["ari"] > 0 else None)
            if (found < 0).any():  # the peer judged on the sentences ours clustered
                same = scores(truths[truth_name][found >= 0], peer["found"][found >= 0])
                row["peer_nmi_same_sentences"] = same["nmi"]
                row["peer_ari_same_sentences"] = same["ari"]
        runs.append(row)
        print(json.dumps(row), flush=True)
        return row

    peers: dict[tuple[str, int], dict] = {}

    def peer_for(truth_name: str, k: int) -> dict:
        if (truth_name, k) not in peers:
            started = time.perf_counter()
            found = tfidf_kmeans(texts, k)
            row = record(f"peer: TF-IDF + k-means (k={k})", truth_name, found,
                         time.perf_counter() - started)
            peers[truth_name, k] = {**row, "found": found}
        return peers[truth_name, k]

    for truth_name, truth in truths.items():
        k = len(np.unique(truth))
        peer = peer_for(truth_name, k)
        params = ClusterParams("kmeans", k=k, projection="pca")
        started = time.perf_counter()
        ours = compute(index, params, texts_of)["assign"]
        record(f"ours: kmeans (k={k})", truth_name, ours, time.perf_counter() - started, peer)
    # The methods that find their own number of clusters: one run each, scored on both
    # truths, against the peer with as many clusters as they found.
    for params in (ClusterParams("hdbscan", projection="umap"),
                   ClusterParams("community", projection="pca"),
                   ClusterParams("community", threshold=0.55, projection="pca")):
        started = time.perf_counter()
        out = compute(index, params, texts_of)
        seconds = time.perf_counter() - started
        found = out["assign"]
        described = ", ".join(f"{k}={v}" for k, v in out["params"].items()
                              if v is not None and k != "method")
        for truth_name in truths:
            peer = peer_for(truth_name, len(out["clusters"]))
            record(f"ours: {params.method} ({described})", truth_name, found, seconds, peer)

    summary = {truth_name: {r["method"]: {"nmi": r["nmi"], "ari": r["ari"]}
                            for r in runs if r["truth"] == truth_name}
               for truth_name in truths}
    RESULTS.mkdir(exist_ok=True)
    result = {"benchmark": "clusters_quality", "sentences": len(texts),
              "model": "all-MiniLM-L6-v2", "runs": runs, "summary": summary,
              "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    (RESULTS / "clusters_quality.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["| truth | method | NMI | ARI | NMI ÷ peer (same k) | ARI ÷ peer (same k) | "
             "NMI (clustered) | ARI (clustered) | peer NMI / ARI (same sentences) | "
             "homogeneity (peer) | clustered | clusters | largest cluster | s |",
             "|" + "---|" * 14]
    for r in runs:
        same = (f"{r['peer_nmi_same_sentences']:.3f} / {r['peer_ari_same_sentences']:.3f}"
                if "peer_nmi_same_sentences" in r else "")
        homogeneity = f"{r['homogeneity']:.3f}" + (f" ({r['peer_homogeneity']:.3f})"
                                                   if "peer_homogeneity" in r else "")
        lines.append(
            f"| {r['truth']} | {r['method']} | {r['nmi']:.3f} | {r['ari']:.3f} | "
            f"{r.get('nmi_ratio_vs_peer', '')} | {r.get('ari_ratio_vs_peer', '')} | "
            f"{r['nmi_clustered']:.3f} | {r['ari_clustered']:.3f} | {same} | {homogeneity} | "
            f"{r['clustered_share']:.1%} | {r['clusters']} | {r['largest_cluster_share']:.1%} | "
            f"{r['seconds']} |")
    (RESULTS / "clusters_quality.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
