"""Names for clusters: top c-TF-IDF terms, and the most central document as an example.

At scale the terms come from a sample of each cluster (``naming_rows``): word
statistics of a few thousand members name a cluster as well as all of them,
and reading every text of a million-document corpus is what makes a job slow.

Example:
    >>> ctfidf_terms(["red apple", "apple pie", "fast car", "car race"],
    ...              np.array([0, 0, 1, 1]), top_n=1)
    {0: ['apple'], 1: ['car']}
"""

from __future__ import annotations

import numpy as np

from searchapp.clusters.algorithms import rows_by_cluster

TOP_TERMS = 10
LABEL_TERMS = 4
NAMING_SAMPLE = 2_000  # members per cluster whose texts name it
# What the label tokenizer leaves of "don't", "we'll", ...: not words worth a label.
CONTRACTION_PARTS = frozenset({"don", "doesn", "didn", "isn", "wasn", "aren", "weren", "haven",
                               "hasn", "couldn", "wouldn", "shouldn", "won", "ll", "ve", "re"})


def naming_rows(assign: np.ndarray, per_cluster: int = NAMING_SAMPLE, seed: int = 0
                ) -> np.ndarray:
    """Sorted rows whose texts are read to name the clusters: up to ``per_cluster`` each.

    Example:
        >>> naming_rows(np.array([0, 0, 0, 1, -1]), per_cluster=2).tolist()
        [1, 2, 3]
    """
    rng = np.random.default_rng(seed)
    parts = [rows if len(rows) <= per_cluster else rng.choice(rows, per_cluster, replace=False)
             for rows in rows_by_cluster(assign).values()]
    return np.sort(np.concatenate(parts)) if parts else np.zeros(0, np.int64)


def ctfidf_terms(texts: list[str], assign: np.ndarray, top_n: int = TOP_TERMS
                 ) -> dict[int, list[str]]:
    """Top terms of each cluster by class-based TF-IDF (BERTopic's c-TF-IDF).

    Each cluster's texts are joined into one document; a term scores
    tf(term, cluster) / words(cluster) × log(1 + A / f(term)), with A the mean
    words per cluster and f(term) its count over all clusters. Outliers (-1)
    get no terms. English stop words and tokens without letters are dropped.

    Example:
        >>> ctfidf_terms(["red apple", "apple pie", "fast car", "car race"],
        ...              np.array([0, 0, 1, 1]), top_n=1)
        {0: ['apple'], 1: ['car']}
    """
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

    groups = rows_by_cluster(assign)
    ids = sorted(groups)
    if not ids:
        return {}
    docs = [" ".join(texts[i] for i in groups[c]) for c in ids]
    vectorizer = CountVectorizer(stop_words=sorted(ENGLISH_STOP_WORDS | CONTRACTION_PARTS),
                                 token_pattern=r"(?u)\b[^\W\d_]{2,}\b")
    try:
        counts = vectorizer.fit_transform(docs).astype(np.float64).tocsr()  # (clusters, V)
    except ValueError:  # nothing but stop words
        return {c: [] for c in ids}
    words = np.asarray(vectorizer.get_feature_names_out())
    per_class = np.asarray(counts.sum(axis=1)).ravel().clip(1)  # (clusters,)
    per_term = np.asarray(counts.sum(axis=0)).ravel()  # (V,)
    idf = np.log1p(per_class.mean() / per_term)
    out = {}
    for row, c in enumerate(ids):
        start, end = counts.indptr[row], counts.indptr[row + 1]
        cols, tf = counts.indices[start:end], counts.data[start:end]
        score = tf / per_class[row] * idf[cols]
        best = np.lexsort((words[cols], -score))[:top_n]  # ties: alphabetical
        out[c] = words[cols[best]].tolist()
    return out


def central_rows(vectors: np.ndarray, assign: np.ndarray) -> dict[int, int]:
    """For each cluster, the row of the member closest (cosine) to the cluster's mean."""
    out = {}
    for c, members in rows_by_cluster(assign).items():
        centre = vectors[members].mean(axis=0)
        out[c] = int(members[np.argmax(vectors[members] @ centre)])
    return out
