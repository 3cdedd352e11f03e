"""Names for clusters: top c-TF-IDF terms, no two alike, and the most central document.

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
from searchapp.clusters.wordforms import same_word, same_words, stems

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


def label_terms(terms: list[str], n: int = LABEL_TERMS) -> list[str]:
    """The first ``n`` terms worth a label: whole words of 3+ letters, forms of one word merged.

    c-TF-IDF often ranks a word and its plural (or another form) side by side;
    a label of four terms says more with one of them. A term is dropped when it
    is a form of a kept term (``wordforms.same_word``: "sausage", "sausages";
    "run", "running"; "pose", "posing"; "woman", "women"), and when it is
    shorter than three letters (what a tokenizer leaves of "don't", initials,
    fragments).

    Example:
        >>> label_terms(["dogs", "dog", "ll", "beach", "women", "woman", "running", "run"])
        ['dogs', 'beach', 'women', 'running']
    """
    kept: list[str] = []
    for term in terms:
        if len(term) < 3 or any(same_word(term, other) for other in kept):
            continue
        kept.append(term)
        if len(kept) == n:
            break
    return kept


def cluster_labels(terms: dict[int, list[str]], fallback: str = "cluster",
                   n: int = LABEL_TERMS) -> dict[int, str]:
    """A label per cluster from its ranked terms, no two reading alike.

    Clusters are labelled in id order (the biggest first). A label that would
    say the same as an earlier one (the same words, whatever their forms and
    order: k-means splitting a big topic gives such twins) keeps its first
    ``n - 1`` words and ends with its best-ranked further word that makes it
    unlike every earlier label; a cluster without one is told apart by its id.
    A cluster with no terms is ``"{fallback} {id}"``.

    Example:
        >>> cluster_labels({0: ["dogs", "beach", "sand", "sea"],
        ...                 1: ["beach", "dog", "sand", "frisbee"], 2: []}, n=3)
        {0: 'dogs, beach, sand', 1: 'beach, dog, frisbee', 2: 'cluster 2'}
    """
    given = _Given()
    out = {}
    for c in sorted(terms):
        words = label_terms(terms[c], n)
        if not words:
            out[c] = f"{fallback} {c}"
            continue
        apart, suffix = words, ""
        if given.alike(words):
            apart = _told_apart(words, label_terms(terms[c], len(terms[c])), given)
            apart, suffix = (apart, "") if apart else (words, f" ({fallback} {c})")
        given.add(apart)
        out[c] = ", ".join(apart) + suffix
    return out


def _told_apart(words: list[str], ranked: list[str], given: _Given) -> list[str] | None:
    """``words`` ending with the first later term of ``ranked`` that makes them a new label."""
    for term in ranked[len(words):]:
        candidate = [*words[:-1], term]
        if not given.alike(candidate):
            return candidate
    return None


class _Given:
    """The labels given so far, found through the stems of their words (not by a scan of all)."""

    def __init__(self) -> None:
        self._labels: list[list[str]] = []
        self._by_stem: dict[str, set[int]] = {}

    def alike(self, words: list[str]) -> bool:
        """Whether a label given so far says the same as ``words``."""
        found: set[int] | None = None
        for word in words:  # labels with a form of every word, then checked both ways
            near = set().union(*(self._by_stem.get(stem, ()) for stem in stems(word)))
            found = near if found is None else found & near
            if not found:
                return False
        return any(same_words(self._labels[i], words) for i in found)

    def add(self, words: list[str]) -> None:
        for stem in {s for word in words for s in stems(word)}:
            self._by_stem.setdefault(stem, set()).add(len(self._labels))
        self._labels.append(words)


def central_rows(vectors: np.ndarray, assign: np.ndarray) -> dict[int, int]:
    """For each cluster, the row of the member closest (cosine) to the cluster's mean."""
    out = {}
    for c, members in rows_by_cluster(assign).items():
        centre = vectors[members].mean(axis=0)
        out[c] = int(members[np.argmax(vectors[members] @ centre)])
    return out
