"""Duplicate questions: every pair above a threshold, grouped, and a check for a new one.

Mining uses the k-nearest-neighbour graph of the corpus' index instead of
comparing all n(n−1)/2 pairs: each document asks the index for its k nearest
other documents (exact below ``EXACT_MAX`` documents, HNSW above), and a pair is
kept when its cosine is at least the threshold. Each unordered pair appears
once, however many of its two members found it. Documents with the same
normalised text (``normalise``) are exact duplicates: they are paired whatever
their cosine or k, and listed first with ``exact: true``.

The mined pairs are stored in the ``analyses`` table for (corpus, model, k,
floor) with the embeddings' fingerprint, where ``floor`` is the threshold
rounded down to a multiple of 0.05. Any later request with the same k and a
threshold at or above a stored floor is answered by filtering, without mining
again, until the corpus or its model changes (the fingerprint differs).

Groups are stars, not whole connected components: the document with the
highest summed cosine to its pair partners becomes a representative and takes
its partners (cosine ≥ threshold to it, or the same normalised text), then the
next unassigned one, and so on (see ``group_pairs``). Every member is thus within
the threshold of its representative, so a chain a≈b≈c≈…≈z, which union-find
would join into one group, cannot put a and z, which may mean different
things, together.

Example:
    >>> report = find_duplicates(app, "faq", threshold=0.85)          # doctest: +SKIP
    >>> report.pairs[0]                                                # doctest: +SKIP
    DuplicatePair(a='q12', b='q40', score=1.0, exact=True, ...)
    >>> check(app, "faq", "How can I change my password?")[0].id      # doctest: +SKIP
    'q12'
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix

from searchapp.calibration import resolve_threshold
from searchapp.context import App
from searchapp.errors import SearchAppError, check_range
from searchapp.index import EXACT_MAX, VectorIndex
from searchapp.jobs import queue
from searchapp.search import CorpusHandle, open_corpus, validate_query
from searchapp.store import repo

KIND = "duplicates"
DEFAULT_K = 10
MAX_K = 100
CHECK_K = 20  # neighbours looked at when checking a new question
MAX_EXPANDED_K = 1000  # a document with more partners than k is asked again, up to this
FLOOR_STEP = 0.05
EXACT_CLIQUE_MAX = 50  # more identical texts than this are paired with the first one only
INLINE_MAX = EXACT_MAX  # the CLI mines corpora up to this size in-process, larger ones as a job
_SPACES = re.compile(r"\s+")


class TooFewDocumentsError(SearchAppError):
    """Duplicate detection needs at least two embedded documents."""


# ---- results -----------------------------------------------------------------
@dataclass(frozen=True)
class DuplicatePair:
    a: str  # external ids
    b: str
    score: float
    exact: bool
    a_text: str = ""
    b_text: str = ""

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "score": self.score, "exact": self.exact}


@dataclass(frozen=True)
class DuplicateGroup:
    representative: str
    members: list[str]  # the representative first, then by cosine to it
    scores: list[float]  # cosine of each member to the representative
    texts: list[str]

    @property
    def size(self) -> int:
        return len(self.members)

    def as_dict(self) -> dict:
        return {"representative": self.representative, "members": self.members,
                "size": self.size}


@dataclass(frozen=True)
class Mined:
    """The threshold-independent result that is stored: k-NN pairs with cosine ≥ floor."""

    a: np.ndarray  # (p,) int64 document ids, a < b
    b: np.ndarray  # (p,)
    score: np.ndarray  # (p,) float32 cosine
    exact: np.ndarray  # (p,) bool: same normalised text
    floor: float
    k: int
    method: str  # "exact" or "hnsw"
    documents: int
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"a": self.a.tolist(), "b": self.b.tolist(),
                "score": np.round(self.score.astype(float), 5).tolist(),
                "exact": self.exact.astype(int).tolist(), "floor": self.floor, "k": self.k,
                "method": self.method, "documents": self.documents}

    @classmethod
    def from_json(cls, data: dict, seconds: float = 0.0) -> Mined:
        return cls(np.asarray(data["a"], np.int64), np.asarray(data["b"], np.int64),
                   np.asarray(data["score"], np.float32), np.asarray(data["exact"], bool),
                   data["floor"], data["k"], data["method"], data["documents"], seconds)

    def at(self, threshold: float) -> np.ndarray:
        """Indices of the pairs kept at ``threshold``: exact first, then by score, high first."""
        keep = np.flatnonzero(self.exact | (self.score >= threshold))
        order = np.lexsort((self.b[keep], self.a[keep], -self.score[keep], ~self.exact[keep]))
        return keep[order]


@dataclass
class DuplicateReport:
    corpus: str
    model: str
    threshold: float
    k: int
    method: str
    documents: int
    pairs: list[DuplicatePair]
    groups: list[DuplicateGroup]
    seconds: float  # time the mining took (when it ran, or when the stored result was made)
    reused: bool  # True when the stored result was used

    def as_dict(self) -> dict:
        return {"pairs": [p.as_dict() for p in self.pairs],
                "groups": [g.as_dict() for g in self.groups]}


@dataclass(frozen=True)
class Match:
    id: str
    text: str
    score: float
    exact: bool = False
    meta: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"id": self.id, "text": self.text, "score": self.score}


# ---- pure parts: normalising, mining, grouping ----------------------------------
def normalise(text: str) -> str:
    """The text duplicates are compared on: NFKC, casefolded, whitespace collapsed,
    punctuation stripped at both ends (inner punctuation is kept).

    Example:
        >>> normalise("  How do I   reset my password?? ")
        'how do i reset my password'
        >>> normalise("Can't log in") == normalise("Cant log in")
        False
    """
    text = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    start, end = 0, len(text)
    while start < end and (unicodedata.category(text[start])[0] == "P" or text[start] == " "):
        start += 1
    while end > start and (unicodedata.category(text[end - 1])[0] == "P" or text[end - 1] == " "):
        end -= 1
    return text[start:end]


def floor_for(threshold: float) -> float:
    """The mining floor for a threshold: rounded down to a multiple of FLOOR_STEP."""
    return round(math.floor(round(threshold / FLOOR_STEP, 6)) * FLOOR_STEP, 2)


def knn_pairs(index: VectorIndex, floor: float, k: int, on_progress=None, ef: int | None = None,
              max_k: int = MAX_EXPANDED_K) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unordered pairs (a < b) of the k-NN graph with cosine ≥ floor: (a, b, score) arrays.

    A document whose k-th neighbour still scores ≥ floor may have more partners
    than k shows (a question asked 30 times), so those few are asked again with
    4k, 16k, ... neighbours (up to ``max_k``) until their list ends below the floor.

    Example:
        >>> idx = VectorIndex(dim=2)
        >>> idx.add(np.array([1, 2, 3]),
        ...         np.array([[1, 0], [0.8, 0.6], [0, 1]], dtype=np.float32))
        >>> a, b, s = knn_pairs(idx, floor=0.7, k=2)
        >>> list(zip(a.tolist(), b.tolist())), [round(float(x), 2) for x in s]
        ([(1, 2)], [0.8])
    """
    total, done = index.count, 0
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    saturated: list[np.ndarray] = []
    for labels, found, scores in index.iter_neighbours(k, ef=ef):
        parts.append(_above(labels, found, scores, floor))
        saturated.append(labels[scores[:, -1] >= floor] if scores.shape[1] else labels[:0])
        done += len(labels)
        if on_progress:
            on_progress(done, total, f"Nearest neighbours of {done:,} of {total:,} documents")
    todo, wider = np.concatenate(saturated) if saturated else np.zeros(0, np.int64), k
    while len(todo) and wider < min(max_k, total - 1):
        wider = min(4 * wider, max_k, total - 1)
        next_todo = []
        for labels, found, scores in index.iter_neighbours(wider, ef=ef, labels=todo):
            parts.append(_above(labels, found, scores, floor))
            next_todo.append(labels[scores[:, -1] >= floor])
        todo = np.concatenate(next_todo)
    a, b, s = (np.concatenate([p[i] for p in parts]) if parts else np.zeros(0, t)
               for i, t in ((0, np.int64), (1, np.int64), (2, np.float32)))
    if len(a) == 0:
        return a, b, s
    order = np.lexsort((-s, b, a))  # for each (a, b), its highest score first
    a, b, s = a[order], b[order], s[order]
    first = np.r_[True, (a[1:] != a[:-1]) | (b[1:] != b[:-1])]
    return a[first], b[first], s[first]


def _above(labels: np.ndarray, found: np.ndarray, scores: np.ndarray, floor: float):
    """The (a < b, score) pairs of one batch of neighbour lists that reach the floor."""
    keep = scores >= floor  # (batch, k)
    rows = np.broadcast_to(labels[:, None], found.shape)[keep]
    cols = found[keep]
    return np.minimum(rows, cols), np.maximum(rows, cols), scores[keep]


def exact_pairs(keys: dict[int, str]) -> tuple[np.ndarray, np.ndarray]:
    """Pairs (a < b) of documents with the same normalised text (empty keys never match)."""
    by_key: dict[str, list[int]] = defaultdict(list)
    for label, key in keys.items():
        if key:
            by_key[key].append(label)
    a, b = [], []
    for labels in by_key.values():
        if len(labels) < 2:
            continue
        labels.sort()
        if len(labels) <= EXACT_CLIQUE_MAX:
            a += [x for i, x in enumerate(labels) for _ in labels[i + 1:]]
            b += [y for i in range(len(labels)) for y in labels[i + 1:]]
        else:  # a star, not a clique: n - 1 pairs instead of n(n - 1)/2
            a += [labels[0]] * (len(labels) - 1)
            b += labels[1:]
    return np.asarray(a, np.int64), np.asarray(b, np.int64)


def mine(index: VectorIndex, keys: dict[int, str] | None, floor: float, k: int,
         on_progress=None) -> Mined:
    """k-NN pairs ≥ floor plus exact-text pairs, merged; see ``Mined``."""
    started = time.monotonic()
    a, b, s = knn_pairs(index, floor, k, on_progress)
    exact = np.zeros(len(a), bool)
    if keys:
        ea, eb = exact_pairs({lab: keys[lab] for lab in index.labels().tolist() if lab in keys})
        if len(ea):
            va, vb = index.vectors(ea), index.vectors(eb)
            es = np.einsum("ij,ij->i", va, vb).astype(np.float32)
            a, b = np.r_[ea, a], np.r_[eb, b]
            s, exact = np.r_[es, s], np.r_[np.ones(len(ea), bool), exact]
            first = np.unique(np.stack([a, b], axis=1), axis=0, return_index=True)[1]
            a, b, s, exact = a[first], b[first], s[first], exact[first]  # exact rows came first
    method = "exact" if index.count <= EXACT_MAX else "hnsw"
    return Mined(a, b, s.astype(np.float32), exact, floor, k, method, index.count,
                 round(time.monotonic() - started, 3))


def group_pairs(a: np.ndarray, b: np.ndarray, scores: np.ndarray, vectors_of,
                threshold: float, keys: dict[int, str] | None = None
                ) -> list[tuple[int, np.ndarray, np.ndarray]]:
    """Duplicate groups from pairs: ``[(representative, members, cosine to it), ...]``.

    A star around each representative, not a whole connected component: documents
    are taken in order of their summed pair scores (the one most similar to the
    most others first); an unassigned one becomes a representative and takes its
    unassigned pair partners, i.e. those with cosine ≥ threshold to it (or the same
    normalised text). A document whose partners were all taken joins the group of
    its best partner if it is within the threshold of that group's representative.
    So every member is within the threshold of its representative, and a chain
    a≈b≈…≈z cannot join a and z. ``vectors_of(labels)`` gives unit vectors (m, dim).
    Runs in O(pairs); biggest groups first.
    """
    if len(a) == 0:
        return []
    nodes, inverse = np.unique(np.r_[a, b], return_inverse=True)
    m, u, v = len(nodes), inverse[:len(a)], inverse[len(a):]
    weights = np.asarray(scores, np.float64)
    graph = coo_matrix((np.r_[weights, weights], (np.r_[u, v], np.r_[v, u])), shape=(m, m)).tocsr()
    strength = np.asarray(graph.sum(axis=1)).ravel()  # (m,) summed cosine to partners
    owner = np.full(m, -1)  # the representative (local index) each node belongs to
    for i in np.argsort(-np.round(strength, 5), kind="stable"):  # ties: the lowest id first
        if owner[i] >= 0:
            continue
        partners = graph.indices[graph.indptr[i]:graph.indptr[i + 1]]
        free = partners[owner[partners] < 0]
        if len(free):
            owner[i], owner[free] = i, i
    _attach_leftovers(graph, owner, nodes, vectors_of, threshold, keys or {})
    return _finish_groups(graph, owner, nodes, vectors_of)


def _attach_leftovers(graph, owner: np.ndarray, nodes: np.ndarray, vectors_of,
                      threshold: float, keys: dict[int, str]) -> None:
    """Put each unassigned node in its best partner's group when close enough to that rep."""
    left = np.flatnonzero(owner < 0)
    if not len(left):
        return
    reps = np.array([owner[graph.indices[graph.indptr[i]:graph.indptr[i + 1]][
        np.argmax(graph.data[graph.indptr[i]:graph.indptr[i + 1]])]] for i in left])
    cosine = np.einsum("ij,ij->i", vectors_of(nodes[left]), vectors_of(nodes[reps]))
    same_text = np.array([bool(keys.get(int(x))) and keys.get(int(x)) == keys.get(int(r))
                          for x, r in zip(nodes[left], nodes[reps], strict=True)])
    ok = (cosine >= threshold) | same_text
    owner[left[ok]] = reps[ok]


def _finish_groups(graph, owner: np.ndarray, nodes: np.ndarray, vectors_of):
    """[(rep, members, cosine to rep)] in labels: rep first, then by cosine; biggest first."""
    m = len(owner)
    sims = np.full(m, np.nan)
    coo = graph.tocoo()
    to_rep = owner[coo.row] == coo.col  # edges from a member to its representative
    sims[coo.row[to_rep]] = coo.data[to_rep]
    is_rep = owner == np.arange(m)
    sims[is_rep] = np.inf  # sorts first
    attached = np.isnan(sims) & (owner >= 0)  # leftovers attached by cosine, not partners
    if attached.any():
        sims[attached] = np.einsum("ij,ij->i", vectors_of(nodes[attached]),
                                   vectors_of(nodes[owner[attached]]))
    grouped = np.flatnonzero(owner >= 0)
    g_owner, g_sims = owner[grouped], sims[grouped]
    size = np.bincount(g_owner, minlength=m)  # (m,) members per representative
    total = np.bincount(g_owner, np.where(np.isinf(g_sims), 0.0, g_sims), minlength=m)
    mean = total / np.maximum(size - 1, 1)
    order = np.lexsort((-g_sims, nodes[g_owner], -np.round(mean[g_owner], 6), -size[g_owner]))
    grouped, g_owner, g_sims = grouped[order], g_owner[order], g_sims[order]
    cuts = np.flatnonzero(np.diff(g_owner)) + 1
    g_sims[np.isinf(g_sims)] = 1.0
    return [(int(nodes[o[0]]), nodes[mem], sim) for mem, o, sim in zip(
        np.split(grouped, cuts), np.split(g_owner, cuts), np.split(g_sims, cuts), strict=True)]


# ---- the corpus: stored results, jobs ------------------------------------------------
def _open(app: App, corpus: str) -> CorpusHandle:
    handle = open_corpus(app, corpus)
    if handle.index.count < 2:
        raise TooFewDocumentsError(
            f"Corpus {corpus!r} has only {handle.index.count} embedded document; duplicates "
            "need at least 2. Upload more documents first.")
    return handle


def _check_k(k: int) -> int:
    return int(check_range("k", k, 1, MAX_K))


def _fingerprint(app: App, handle: CorpusHandle) -> str:
    with app.db.session() as s:
        return repo.embedding_fingerprint(s, handle.corpus_id, handle.model.id)


def params_key(k: int, floor: float) -> str:
    return f"k={k};floor={floor:.2f}"


def stored(app: App, handle: CorpusHandle, threshold: float, k: int) -> Mined | None:
    """A stored, current result for this k with a floor ≤ threshold (highest floor), if any."""
    fingerprint = _fingerprint(app, handle)
    with app.db.session() as s:
        rows = [r for r in repo.analyses(s, handle.corpus_id, handle.model.id, KIND)
                if r.fingerprint == fingerprint and r.params.get("k") == k
                and r.params.get("floor", 2.0) <= threshold + 1e-9]
        if not rows:
            return None
        best = max(rows, key=lambda r: r.params["floor"])
        return Mined.from_json(best.result, best.seconds or 0.0)


def mine_corpus(app: App, corpus: str, threshold: float | None = None, k: int = DEFAULT_K,
                on_progress=None) -> Mined:
    """Mine a corpus at floor_for(threshold) and store the result (replacing an old one)."""
    handle = _open(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    k, floor = _check_k(k), floor_for(threshold)
    fingerprint = _fingerprint(app, handle)
    with app.db.session() as s:
        texts = repo.document_texts(s, handle.corpus_id)
    keys = {label: normalise(text) for label, (_, text) in texts.items()}
    mined = mine(handle.index, keys, floor, k, on_progress)
    with app.db.session() as s:
        repo.save_analysis(s, handle.corpus_id, handle.model.id, KIND, params_key(k, floor),
                           {"k": k, "floor": floor}, fingerprint, mined.to_json(), mined.seconds)
    return mined


def find_duplicates(app: App, corpus: str, threshold: float | None = None, k: int = DEFAULT_K,
                    compute: bool = True, on_progress=None) -> DuplicateReport | None:
    """Duplicate pairs and groups at ``threshold`` (the model's own when None).

    Uses a stored result when one is current; otherwise mines here when
    ``compute`` (use ``request_mining`` for a job instead), else returns None.
    """
    handle = _open(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    k = _check_k(k)
    mined, reused = stored(app, handle, threshold, k), True
    if mined is None:
        if not compute:
            return None
        mined, reused = mine_corpus(app, corpus, threshold, k, on_progress), False
    return build_report(app, handle, mined, threshold, reused)


def build_report(app: App, handle: CorpusHandle, mined: Mined, threshold: float,
                 reused: bool) -> DuplicateReport:
    """Stored pairs → pairs and groups at ``threshold``, with external ids and texts."""
    keep = mined.at(threshold)
    a, b, score, exact = mined.a[keep], mined.b[keep], mined.score[keep], mined.exact[keep]
    with app.db.session() as s:
        docs = repo.document_texts(s, handle.corpus_id, np.unique(np.r_[a, b]).tolist())
    keys = {label: normalise(text) for label, (_, text) in docs.items()}
    pairs = [DuplicatePair(docs[x][0], docs[y][0], round(float(sc), 4), bool(ex),
                           docs[x][1], docs[y][1])
             for x, y, sc, ex in zip(a.tolist(), b.tolist(), score, exact, strict=True)
             if x in docs and y in docs]
    groups = [DuplicateGroup(docs[rep][0], [docs[x][0] for x in members.tolist()],
                             [round(float(v), 4) for v in sims],
                             [docs[x][1] for x in members.tolist()])
              for rep, members, sims in group_pairs(a, b, score, handle.index.vectors, threshold,
                                                    keys)]
    return DuplicateReport(handle.name, handle.model.name, threshold, mined.k, mined.method,
                           handle.index.count, pairs, groups, mined.seconds, reused)


def request_mining(app: App, corpus: str, threshold: float | None = None,
                   k: int = DEFAULT_K) -> int:
    """Queue a ``duplicates`` job (or return the id of the same one already queued/running)."""
    handle = _open(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    payload = {"corpus": handle.name, "threshold": threshold, "k": _check_k(k)}
    active = queue.active_for(app.db, KIND, "corpus", handle.name)
    if active and active.payload.get("k") == k and \
            floor_for(active.payload.get("threshold", 2.0)) <= threshold:
        return active.id
    return queue.enqueue(app.db, KIND, payload)


def duplicates_task(ctx, payload: dict) -> dict:
    """Worker task ``duplicates``: payload {"corpus", "threshold", "k"}.

    Idempotent: a current stored result is reused; after a crash it mines again.
    """
    app, corpus = ctx.app, payload["corpus"]
    handle = _open(app, corpus)
    threshold = resolve_threshold(app, handle.model.name, payload.get("threshold"))
    k = _check_k(payload.get("k", DEFAULT_K))
    mined = stored(app, handle, threshold, k)
    if mined is None:
        ctx.progress(0, handle.index.count, "Finding nearest neighbours", force=True)
        mined = mine_corpus(app, corpus, threshold, k, on_progress=ctx.progress)
    kept = mined.at(threshold)
    return {"corpus": corpus, "threshold": threshold, "k": k, "floor": mined.floor,
            "documents": mined.documents, "pairs": len(kept),
            "exact_pairs": int(mined.exact[kept].sum()), "method": mined.method,
            "seconds": mined.seconds}


# ---- a new question --------------------------------------------------------------------
def check(app: App, corpus: str, question: str, threshold: float | None = None,
          k: int = CHECK_K) -> list[Match]:
    """Documents of the corpus that are likely duplicates of ``question`` (cosine ≥ threshold).

    One encoder pass and one index query: milliseconds, whatever the corpus size.
    A document with the same normalised text is always a match.
    """
    handle = open_corpus(app, corpus)
    question = validate_query(question, k, None)
    threshold = resolve_threshold(app, handle.model.name, threshold)
    vector = app.encoder(handle.model.name).encode([question])  # (1, dim)
    labels, scores = handle.index.search(vector, k)
    with app.db.session() as s:
        docs = repo.documents_by_id(s, labels[0].tolist())
    key = normalise(question)
    out = []
    for label, score in zip(labels[0].tolist(), scores[0].tolist(), strict=True):
        doc = docs.get(label)
        exact = doc is not None and bool(key) and normalise(doc.text) == key
        if doc is not None and (score >= threshold or exact):
            out.append(Match(doc.external_id, doc.text, round(float(score), 4), exact,
                             dict(doc.meta or {})))
    return out


def add_question(app: App, corpus: str, question: str, external_id: str | None = None):
    """Add one question to the corpus and queue its embedding (returns the UploadSummary)."""
    from searchapp.corpora import upload
    from searchapp.ingest import Table

    question = validate_query(question, 1, None)
    columns = {"text": [question]} | ({"id": [external_id.strip()]} if external_id else {})
    table = Table(pd.DataFrame(columns), "txt", lambda i: "the new question")
    return upload(app, table, corpus, "text", "id" if external_id else None, meta_columns=[])


# ---- export ----------------------------------------------------------------------------
def pairs_frame(report: DuplicateReport) -> pd.DataFrame:
    """One row per pair: a, b, score, exact, a_text, b_text (for CSV export)."""
    return pd.DataFrame([{**p.as_dict(), "a_text": p.a_text, "b_text": p.b_text}
                         for p in report.pairs],
                        columns=["a", "b", "score", "exact", "a_text", "b_text"])


def groups_frame(report: DuplicateReport) -> pd.DataFrame:
    """One row per group member: group, representative, size, member, score, text."""
    rows = [{"group": n, "representative": g.representative, "size": g.size, "member": m,
             "score": sc, "text": t}
            for n, g in enumerate(report.groups, start=1)
            for m, sc, t in zip(g.members, g.scores, g.texts, strict=True)]
    return pd.DataFrame(rows, columns=["group", "representative", "size", "member", "score",
                                       "text"])
