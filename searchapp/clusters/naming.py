"""What names a cluster: its c-TF-IDF terms and its most central documents.

At scale the terms come from a sample of each cluster (``naming_rows``): word
statistics of a few thousand members name a cluster as well as all of them,
and reading every text of a million-document corpus is what makes a job slow.

Terms are words and phrases of two or three words (``terms_of``; Chinese and Japanese
text in the units of ``cjk_terms``; each document's stop words those of its language:
``stopwords``), counted
once per document (``term_counts``) and summed per cluster at any level of
the hierarchy (``ctfidf_scored``). ``names`` turns them, and the central
documents' titles, into the names a person reads.

Example:
    >>> ctfidf_terms(["red apple", "apple pie", "fast car", "car race"],
    ...              np.array([0, 0, 1, 1]), top_n=1)
    {0: ['apple'], 1: ['car']}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from searchapp.clusters.algorithms import rows_by_cluster
from searchapp.clusters.cjk_terms import CJK_RUN, cjk_units, is_japanese, japanese_phrases
from searchapp.clusters.stopwords import stop_words_of
from searchapp.clusters.wordforms import same_word

TOP_TERMS = 10
NAMING_TERMS = 50  # terms by each ranking a name is chosen from (``ctfidf_scored``)
LABEL_TERMS = 4  # terms in a list of terms (``label_terms``)
CENTRAL = 3  # central documents shown per cluster
NAMING_SAMPLE = 2_000  # members per cluster whose texts name it
# What the label tokenizer leaves of "don't", "we'll", ...: not words worth a label.
# Forms of "do" that scikit-learn's English list lacks: every other question starts with one.
AUXILIARIES = frozenset({"did", "does", "doing"})
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


# Words (a hyphenated one is one word: "write-ahead"), and punctuation and line breaks that
# break a phrase (a heading's last word and the next line's first make none).
TOKEN = re.compile(r"(?u)\w+(?:-\w+)*|[^\w\s]|\n")
MIN_PHRASE_COUNT = 2  # a phrase seen once in the whole corpus names nothing
# Stop words a three-word phrase may hold in its middle ("point in time", "bank of america");
# any other stop word, a number or punctuation breaks a phrase.
JOINERS = frozenset({"of", "in", "on", "for", "to", "and", "with", "by", "at", "from"})


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS | CONTRACTION_PARTS | AUXILIARIES)


def terms_of(text: str, stop: frozenset[str] | None = None) -> list[str]:
    """The words (2+ letters, no digits, no stop words) and phrases of two or three words.

    A phrase begins and ends with such words, side by side in the text; a
    three-word one may hold a joining stop word in the middle (``JOINERS``:
    "point in time"). Any other stop word, a number or punctuation breaks it
    ("card, pin" gives no phrase), and so does a line break; a hyphenated word is
    one word, and two forms of one word side by side ("columns column") are no phrase.

    Example:
        >>> terms_of("How do I reset my credit card PIN in 2024?")
        ['reset', 'credit', 'card', 'pin', 'credit card', 'card pin', 'credit card pin']
        >>> terms_of("apples, pears")
        ['apples', 'pears']
        >>> terms_of("Synopsis\\nDROP OWNED")
        ['synopsis', 'drop', 'owned', 'drop owned']
        >>> terms_of("a point in time for write-ahead logs")[-3:]
        ['write-ahead logs', 'point in time', 'time for write-ahead']
    """
    stop = _stop_words() if stop is None else stop
    tokens, units, cjk_phrases = _tokens(text)
    good = [len(t) >= 2 and t.replace("-", "").isalpha() and "_" not in t and t not in stop
            and i not in units for i, t in enumerate(tokens)]
    words = [t for i, (t, ok) in enumerate(zip(tokens, good, strict=True)) if ok or i in units]
    pairs = [f"{a} {b}" for (a, b), (ga, gb) in zip(pairwise(tokens), pairwise(good),
                                                     strict=True)
             if ga and gb and not _forms(a, b)]
    triples = [f"{a} {b} {c}" for i, (a, b, c) in enumerate(zip(tokens, tokens[1:],
                                                                  tokens[2:], strict=False))
               if good[i] and good[i + 2] and (good[i + 1] or b in JOINERS)
               and not _forms(a, c)]
    return words + pairs + triples + cjk_phrases


def _tokens(text: str) -> tuple[list[str], set[int], list[str]]:
    """The lower-cased tokens of ``text``, the positions of those that are words of Chinese
    or Japanese text (``cjk_units``: never part of an English-style phrase), and the
    Japanese phrases (``japanese_phrases``).

    Example:
        >>> _tokens("psqlでデータベースの復元")
        (['psql', 'データベース', '復元'], {1, 2}, ['データベース 復元'])
    """
    tokens = [t.lower() for t in TOKEN.findall(text)]
    if text.isascii() or not CJK_RUN.search(text):
        return tokens, set(), []
    japanese = is_japanese(text)
    out: list[str] = []
    units: set[int] = set()
    phrases: list[str] = []
    for token in tokens:
        last = 0
        for run in CJK_RUN.finditer(token):
            out += TOKEN.findall(token[last:run.start()])
            for unit in cjk_units(run.group(), japanese):
                units.add(len(out))
                out.append(unit)
            phrases += japanese_phrases(run.group()) if japanese else []
            last = run.end()
        out += TOKEN.findall(token[last:]) if last else [token]
    return out, units, phrases


def _forms(a: str, b: str) -> bool:
    """Whether two words are forms of one (checked only when they start alike: cheap)."""
    return a[0] == b[0] and same_word(a, b)


def term_counts(texts: list[str]):
    """(documents × terms as a 0/1 CSR matrix, the terms): read once, cut by any level.

    A term counts once per document (a name repeated in one text does not name
    its cluster); phrases in fewer than ``MIN_PHRASE_COUNT`` documents are left out.

    Example:
        >>> counts, terms = term_counts(["credit card lost", "lost credit card", "new card card"])
        >>> terms.tolist(), counts.toarray().sum(axis=0).tolist()
        (['card', 'credit', 'credit card', 'lost', 'new'], [3, 2, 2, 2, 1])
    """
    from sklearn.feature_extraction.text import CountVectorizer

    stop = _stop_words()
    vectorizer = CountVectorizer(analyzer=lambda text: terms_of(text, stop_words_of(text, stop)),
                                 binary=True)
    try:
        counts = vectorizer.fit_transform(texts).tocsr()
    except ValueError:  # nothing but stop words
        return None, np.zeros(0, dtype=object)
    terms = np.asarray(vectorizer.get_feature_names_out(), dtype=object)
    total = np.asarray(counts.sum(axis=0)).ravel()
    keep = np.flatnonzero([" " not in t or c >= MIN_PHRASE_COUNT
                           for t, c in zip(terms, total, strict=True)])
    return counts[:, keep], terms[keep]


@dataclass(frozen=True)
class Scored:
    """A term of a cluster: its c-TF-IDF ``score``, how many ``members`` of the cluster
    (of its naming sample) hold it, their ``share`` of the cluster, and the share of the
    other clusters' documents that hold it (``elsewhere``: boilerplate is everywhere)."""

    term: str
    score: float
    members: int
    share: float = 1.0
    elsewhere: float = 0.0


def ctfidf_scored(counts, terms: np.ndarray, assign: np.ndarray, top_n: int = TOP_TERMS
                  ) -> dict[int, list[Scored]]:
    """The ``top_n`` terms of each cluster (rows of ``assign``; -1: none) by c-TF-IDF, best
    first, and among them also the ``top_n`` with the widest gap between the share of the
    cluster and the share of the other documents that hold them (what ``names`` picks from:
    in long texts the best c-TF-IDF terms are often words every document has).

    Example:
        >>> counts, terms = term_counts(["red apple", "red apple pie", "fast car", "car race"])
        >>> [(t.term, t.members) for t in ctfidf_scored(counts, terms, np.array([0, 0, 1, 1]),
        ...                                             top_n=2)[0]]
        [('apple', 2), ('red', 2)]
        >>> ctfidf_scored(counts, terms, np.array([0, 0, 1, 1]), top_n=1)[1]  # doctest: +ELLIPSIS
        [Scored(term='car', score=0.66..., members=2, share=1.0, elsewhere=0.0)]
    """
    from scipy.sparse import csr_matrix

    groups = rows_by_cluster(assign)
    ids = sorted(groups)
    if not ids:
        return {}
    if counts is None or counts.shape[1] == 0:
        return {c: [] for c in ids}
    rows = np.concatenate([groups[c] for c in ids])
    cols = np.repeat(np.arange(len(ids)), [len(groups[c]) for c in ids])
    member = csr_matrix((np.ones(len(rows)), (cols, rows)), shape=(len(ids), counts.shape[0]))
    per_cluster = (member @ counts).astype(np.float64).tocsr()  # (clusters, V)
    per_class = np.asarray(per_cluster.sum(axis=1)).ravel().clip(1)  # (clusters,)
    per_term = np.asarray(per_cluster.sum(axis=0)).ravel().clip(1)  # (V,)
    idf = np.log1p(per_class.mean() / per_term)
    held = np.asarray(per_cluster.sum(axis=0)).ravel()  # documents holding each term
    everyone = len(rows)
    out = {}
    for row, c in enumerate(ids):
        start, end = per_cluster.indptr[row], per_cluster.indptr[row + 1]
        cols_c, tf = per_cluster.indices[start:end], per_cluster.data[start:end]
        score = tf / per_class[row] * idf[cols_c]
        size, others = len(groups[c]), max(everyone - len(groups[c]), 1)
        share, elsewhere = tf / size, (held[cols_c] - tf) / others
        best = np.lexsort((terms[cols_c], -score))[:top_n]  # ties: alphabetical
        widest = np.lexsort((terms[cols_c], -(share - elsewhere)))[:top_n]
        chosen = np.union1d(best, widest)
        chosen = chosen[np.lexsort((terms[cols_c[chosen]], -score[chosen]))]
        out[c] = [Scored(str(terms[cols_c[i]]), float(score[i]), int(tf[i]), float(share[i]),
                         float(elsewhere[i])) for i in chosen]
    return out


def ctfidf_from_counts(counts, terms: np.ndarray, assign: np.ndarray, top_n: int = TOP_TERMS
                       ) -> dict[int, list[str]]:
    """Top terms per cluster from per-document ``counts`` (rows of ``assign``; -1: none)."""
    return {c: [t.term for t in scored[:top_n]]
            for c, scored in ctfidf_scored(counts, terms, assign, top_n).items()}


def ctfidf_terms(texts: list[str], assign: np.ndarray, top_n: int = TOP_TERMS
                 ) -> dict[int, list[str]]:
    """Top terms of each cluster by class-based TF-IDF (BERTopic's c-TF-IDF).

    Each cluster's texts count as one document; a term scores
    tf(term, cluster) / terms(cluster) × log(1 + A / f(term)), with A the mean
    terms per cluster and f(term) its count over all clusters: distinctive
    against the rest, not merely frequent. Terms are words and two-word
    phrases (``terms_of``); outliers (-1) get none.

    Example:
        >>> ctfidf_terms(["red apple", "apple pie", "fast car", "car race"],
        ...              np.array([0, 0, 1, 1]), top_n=1)
        {0: ['apple'], 1: ['car']}
    """
    counts, terms = term_counts(texts)
    return ctfidf_from_counts(counts, terms, assign, top_n)


def label_terms(terms: list[str], n: int = LABEL_TERMS) -> list[str]:
    """The first ``n`` terms worth a label: words of 3+ letters and phrases, no repeats.

    c-TF-IDF often ranks a word and its plural (or another form) side by side;
    a label of four terms says more with one of them. A word is dropped when it
    is a form of a word already in the label (``wordforms.same_word``:
    "sausage", "sausages"; "run", "running"; "woman", "women"), alone or
    inside a phrase, and when it is shorter than three letters (what a
    tokenizer leaves of "don't", initials, fragments). A phrase takes the
    place of the word of it already there ("card" then "credit card" gives
    "credit card"), and is dropped when all its words are there already.

    Example:
        >>> label_terms(["dogs", "dog", "ll", "beach", "women", "woman", "running", "run"])
        ['dogs', 'beach', 'women', 'running']
        >>> label_terms(["card", "pin", "credit card", "card pin", "lost"])
        ['credit card', 'pin', 'lost']
    """
    kept: list[str] = []
    for term in terms:
        parts = term.split()
        if any(len(p) < 3 for p in parts):
            continue
        known = [i for i, k in enumerate(kept)
                 if any(same_word(p, q) for p in parts for q in k.split())]
        if len(parts) == 1 and known:
            continue
        if len(parts) > 1 and known:
            covered = {p for i in known for p in parts
                       if any(same_word(p, q) for q in kept[i].split())}
            if len(covered) == len(parts) or len(known) > 1 or " " in kept[known[0]]:
                continue
            kept[known[0]] = term  # the phrase says more than its word
            continue
        kept.append(term)
        if len(kept) == n:
            break
    return kept


def central_members(vectors: np.ndarray, assign: np.ndarray, top: int = CENTRAL
                    ) -> dict[int, list[int]]:
    """For each cluster, the rows of its ``top`` members closest (cosine) to its mean.

    Example:
        >>> v = np.array([[1.0, 0], [0.9, 0.1], [0.6, 0.4], [0, 1.0]])
        >>> central_members(v, np.array([0, 0, 0, 1]), top=2)
        {0: [0, 1], 1: [3]}
    """
    out = {}
    for c, members in rows_by_cluster(assign).items():
        centre = vectors[members].mean(axis=0)
        sims = vectors[members] @ centre
        best = np.argsort(-sims, kind="stable")[:top]
        out[c] = members[best].astype(int).tolist()
    return out


def central_rows(vectors: np.ndarray, assign: np.ndarray) -> dict[int, int]:
    """For each cluster, the row of the member closest (cosine) to the cluster's mean."""
    return {c: rows[0] for c, rows in central_members(vectors, assign, 1).items()}
