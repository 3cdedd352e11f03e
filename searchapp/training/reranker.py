"""A reranker trained on a corpus' query judgements, attached only when it beats no reranking.

``train_reranker`` runs these steps; the lead's ``learn`` job and the
``train-reranker`` job (``reranker_task``) both call it:

1. **pairs** (``training_pairs``): for each training query, each document judged
   relevant is a positive, read by its best-matching passage (the one the
   search matched, else the passage nearest the query: search scores passages,
   so the reranker reads what it will rerank); the negatives are the documents
   judged not relevant and the corpus' own hybrid results for the query that are
   not judged relevant, from rank ``skip_top + 1`` on: the very first results of
   a good search are often relevant documents nobody judged (the false-negative
   guard), the next ones are the hard negatives;
2. **training**: a cross-encoder (``cross_encoder``) initialised from the
   corpus' current encoder's transformer (no cross-encoder weights can be
   installed here), its first ``layers`` layers, pairs cut to ``max_length``
   tokens, binary cross-entropy;
3. **blend** (``fit_blend``): a fifth of the training queries (by hash) is kept
   out of the cross-encoder's training; on their first ``depth`` hybrid
   candidates a logistic regression weighs the cross-encoder's logit against
   the search's own rank (``rerank.Blend``). Trained on a few hundred
   judgements, the cross-encoder alone ranks worse than the search (measured:
   ``benchmarks/rerank_quality.py``); blended, it can only move what it is sure of;
4. **verdict** (``compare``): on the held-out judged queries, nDCG@10 of the
   first ``depth`` hybrid candidates as the search ranks them against the same
   candidates reranked, paired bootstrap (``evaluation.bootstrap``);
5. only when the verdict is "better" is the reranker saved
   (``DATA_DIR/models/rerankers/NAME``, safetensors, with a card) and attached to
   the corpus (``corpora.reranker``); otherwise it is kept nowhere and the
   result says why.

Example:
    >>> train, held = holdout.split(corpus_items(app, "manual"))          # doctest: +SKIP
    >>> result = train_reranker(app, "manual", train, held)               # doctest: +SKIP
    >>> result.kept, result.reason                                        # doctest: +SKIP
    (True, 'better: nDCG@10 61.2 → 66.0 (+4.8, 95% interval +2.1 to +7.6) on 60 held-out queries')
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from searchapp.context import App
from searchapp.embedding import cross_encoder
from searchapp.embedding.models import model_path, write_card
from searchapp.errors import TrainingDataError
from searchapp.evaluation.bootstrap import paired_mean_difference
from searchapp.evaluation.judged import Items, JudgedQuery
from searchapp.evaluation.ranking import query_metrics
from searchapp.search import rerank
from searchapp.search.service import SearchHit, search
from searchapp.store import repo
from searchapp.training import cross_train, holdout
from searchapp.vectors.handle import CorpusHandle, open_corpus

Pair = tuple[str, str, int]
DEV_FRACTION = 0.2  # of the training queries: left out of the cross-encoder to fit the blend
DEV_SEED = "searchapp-reranker-blend-v1"
Progress = Callable[[int, int, str], None]


@dataclass
class RerankerConfig:
    """How a reranker is trained and judged (defaults: see docs/learning.md for the numbers)."""

    # The shape: the encoder's first ``layers`` layers, pairs cut to ``max_length`` tokens.
    # 3 x 64 rescores 30 pairs in 68 ms (int8 graph, 2 cores; 6 x 128: 269 ms) and trains
    # 5.7x faster (N=900: 2.95 against 16.9 min), with the same gain on the PostgreSQL
    # manual's test queries (+0.30 against +0.24 nDCG@10, neither distinguishable; the
    # results of rerank_latency.py and rerank_quality.py, _900 and _900_3x64).
    layers: int = 3
    max_length: int = 64
    skip_top: int = 3  # hybrid results never taken as negatives (false-negative guard)
    mine_depth: int = 30  # hybrid results searched for negatives
    negatives: int = 4  # per positive
    depth: int = rerank.DEPTH  # candidates reranked in the verdict (as in search)
    epochs: int = 2
    min_steps: int = 60
    batch_size: int = 16
    lr: float = 2e-5
    seed: int = 42
    max_steps: int | None = None  # stop early (tests, benchmarks)


@dataclass
class RerankerResult:
    """What ``train_reranker`` did: kept (attached) or not, why, and the numbers."""

    corpus: str
    name: str
    kept: bool
    reason: str
    comparison: dict = field(default_factory=dict)  # Difference.scaled(): nDCG@10 × 100
    training: dict = field(default_factory=dict)
    pairs: int = 0
    seconds: float = 0.0
    scorer: rerank.Reranker | None = field(default=None, repr=False)  # what the verdict used

    def as_dict(self) -> dict:
        """The result as JSON (without the scorer)."""
        return {"corpus": self.corpus, "name": self.name, "kept": self.kept,
                "reason": self.reason, "comparison": self.comparison,
                "training": self.training, "pairs": self.pairs, "seconds": self.seconds}


# ---- 1. pairs ------------------------------------------------------------------------------
def training_pairs(app: App, handle: CorpusHandle, items: Items, config: RerankerConfig
                   ) -> list[Pair]:
    """(query, passage, 1/0) rows: judged positives, judged and mined negatives (see above).

    Example:
        >>> rows = training_pairs(app, handle, train, RerankerConfig())   # doctest: +SKIP
        >>> rows[0]                                                         # doctest: +SKIP
        ('Continuous Archiving', 'To enable WAL archiving, set ...', 1)
    """
    rows: list[Pair] = []
    for q in items.queries:
        hits = search(app, handle, q.query, k=config.mine_depth)
        rows += _query_pairs(app, handle, q, hits, config)
    return rows


def _query_pairs(app: App, handle: CorpusHandle, q: JudgedQuery, hits: list[SearchHit],
                 config: RerankerConfig) -> list[Pair]:
    by_id = {h.id: h for h in hits}
    judged_no = [by_id[d] for d, g in q.grades.items() if g == 0 and d in by_id]
    mined = [h for h in hits[config.skip_top:] if h.id not in q.grades]
    negatives = (judged_no + mined)[:config.negatives * max(len(q.relevant), 1)]
    rows: list[Pair] = []
    for doc in q.relevant:
        text = rerank.passage_text(by_id[doc]) if doc in by_id else \
            best_passage(app, handle, q.query, doc)
        if text:
            rows.append((q.query, text, 1))
    return rows + [(q.query, rerank.passage_text(h), 0) for h in negatives] if rows else []


def best_passage(app: App, handle: CorpusHandle, query: str, doc: str) -> str | None:
    """Document ``doc``'s passage nearest ``query`` (its whole text when it is not split)."""
    with app.db.session() as s:
        row = repo.document_by_external_id(s, handle.corpus_id, doc)
        if row is None:
            return None
        text, doc_id = row.text, row.id
        spans = repo.passage_spans(s, [doc_id])
    if handle.passages is None or doc_id not in handle.passages.passage_counts:
        return text
    vector = app.encoder(handle.model.name).encode_query(query)
    number = handle.passages.best_passages(vector, [doc_id])[doc_id][0]
    if doc_id not in spans or number >= len(spans[doc_id]):
        return text
    start, end = (int(x) for x in spans[doc_id][number])
    return text[start:end]


# ---- 2. training ---------------------------------------------------------------------------
def new_cross_encoder(app: App, handle: CorpusHandle, config: RerankerConfig
                      ) -> cross_encoder.CrossEncoder:
    """A cross-encoder from the corpus' current encoder: its first ``layers`` layers."""
    model = cross_encoder.CrossEncoder.from_bi_encoder(
        model_path(handle.model.name, app.settings), device=app.settings.device,
        seed=config.seed)
    layers = model.transformer.encoder.layer
    if config.layers < len(layers):
        model.transformer.encoder.layer = layers[:config.layers]
        model.transformer.config.num_hidden_layers = config.layers
    model.max_length = config.max_length
    return model


def fit(model: cross_encoder.CrossEncoder, pairs: list[Pair], work: Path,
        config: RerankerConfig, progress: Progress | None = None) -> dict:
    """Train ``model`` on ``pairs`` (resumable from ``work``); the training's numbers."""
    settings = cross_train.CrossConfig(
        epochs=config.epochs, min_steps=config.min_steps, batch_size=config.batch_size,
        lr=config.lr, seed=config.seed, max_steps=config.max_steps)
    return cross_train.train(model, pairs, work, settings, progress)


# ---- 3. verdict ----------------------------------------------------------------------------
def compare(app: App, handle: CorpusHandle, scorer: rerank.Reranker, items: Items,
            depth: int = rerank.DEPTH) -> dict:
    """nDCG@10 of the first ``depth`` hybrid hits as searched vs reranked, per held-out query.

    Returns ``Difference.scaled()`` (×100: a, b, delta, low, high, verdict), B being
    the reranked order.
    """
    plain, reranked = [], []
    for q in items.queries:
        hits = search(app, handle, q.query, k=depth)
        plain.append(query_metrics([h.id for h in hits], q.grades)["ndcg@10"])
        order = rerank.rerank_hits(scorer, q.query, hits, depth)
        reranked.append(query_metrics([h.id for h in order], q.grades)["ndcg@10"])
    return paired_mean_difference(np.array(plain), np.array(reranked)).scaled()


def fit_blend(app: App, handle: CorpusHandle, scorer: rerank.Reranker, items: Items,
              depth: int = rerank.DEPTH) -> rerank.Blend:
    """The weights of the cross-encoder's logit and the search's rank, fitted on ``items``
    (judged queries the cross-encoder did not train on); the search's order when they
    cannot be fitted (no candidate judged relevant, or none judged not).

    Example:
        >>> fit_blend(app, handle, scorer, dev)                           # doctest: +SKIP
        Blend(cross=0.61, rank=1.32, bias=-2.1)
    """
    from sklearn.linear_model import LogisticRegression

    rows, labels = [], []
    for q in items.queries:
        hits = search(app, handle, q.query, k=depth)
        logits = scorer.logits(q.query, [rerank.passage_text(h) for h in hits])
        for rank, (hit, logit) in enumerate(zip(hits, logits, strict=True), start=1):
            rows.append((float(logit), -np.log(rank)))
            labels.append(int(q.grades.get(hit.id, 0) >= 1))
    if len(set(labels)) < 2:
        return rerank.Blend(cross=0.0, rank=1.0)
    fitted = LogisticRegression(C=1.0).fit(np.array(rows), np.array(labels))
    cross, prior = (float(x) for x in fitted.coef_[0])
    return rerank.Blend(round(cross, 6), round(prior, 6), round(float(fitted.intercept_[0]), 6))


def reason_of(comparison: dict) -> str:
    """The verdict in words.

    Example:
        >>> print(reason_of({"verdict": "worse", "a": {"value": 60.0, "n": 40},
        ...                  "b": {"value": 58.0}, "delta": -2.0, "low": -3.5, "high": -0.5}))
        worse: nDCG@10 60.0 → 58.0 (-2.0, 95% interval -3.5 to -0.5) on 40 held-out queries
    """
    c = comparison
    return (f"{c['verdict']}: nDCG@10 {c['a']['value']:.1f} → {c['b']['value']:.1f} "
            f"({c['delta']:+.1f}, 95% interval {c['low']:+.1f} to {c['high']:+.1f}) on "
            f"{c['a']['n']} held-out queries")


# ---- 4. keep only if better -------------------------------------------------------------------
def keep(app: App, handle: CorpusHandle, model: cross_encoder.CrossEncoder, name: str,
         card: dict, blend: rerank.Blend | None = None) -> Path:
    """Save ``model`` and its ``blend`` as reranker ``name`` with its card; attach it."""
    folder = rerank.reranker_folder(app.settings, name)
    saving = folder.with_name(f".{name}.saving")
    shutil.rmtree(saving, ignore_errors=True)
    model.save(saving)
    rerank.write_blend(saving, blend or rerank.Blend())
    write_card(saving, card)
    if model.device.type == "cpu":  # its int8 graph made now: the first reranked search loads it
        rerank.Reranker(model, quantized=True, graph_dir=saving)
    shutil.rmtree(folder, ignore_errors=True)
    saving.rename(folder)
    with app.db.session() as s:
        repo.set_corpus_reranker(s, handle.name, name)
    return folder


def train_reranker(app: App, corpus: str, train_items: Items, heldout_items: Items, *,
                   name: str | None = None, config: RerankerConfig | None = None,
                   work: Path | None = None, progress: Progress | None = None
                   ) -> RerankerResult:
    """Train a reranker on ``train_items``' queries; attach it only if it beats no
    reranking on ``heldout_items``' queries (see the module docstring).

    ``name``: the reranker's folder name (default ``CORPUS-reranker``, replaced when
    kept). ``work``: where training checkpoints go (default under DATA_DIR/work).

    Example:
        >>> result = train_reranker(app, "manual", train, held)           # doctest: +SKIP
        >>> result.kept                                                    # doctest: +SKIP
        True
    """
    config = config or RerankerConfig()
    started = time.monotonic()
    handle = open_corpus(app, corpus)
    name = name or default_name(handle.name)
    check_items(train_items, heldout_items)
    fit_items, dev_items = holdout.split(train_items, DEV_FRACTION, DEV_SEED)
    pairs = training_pairs(app, handle, fit_items, config)
    model = new_cross_encoder(app, handle, config)
    work = work or app.settings.work_dir / "rerankers" / name
    training = fit(model, pairs, work, config, progress)
    scorer = rerank.Reranker(model, quantized=True)  # as search will load it
    scorer.blend = blend = fit_blend(app, handle, scorer, dev_items, config.depth)
    training["blend"] = asdict(blend)
    comparison = compare(app, handle, scorer, heldout_items, config.depth)
    reason, kept = reason_of(comparison), comparison["verdict"] == "better"
    if kept:
        keep(app, handle, model, name, {"kind": "reranker", "corpus": handle.name,
                                         "base": handle.model.name, "verdict": comparison,
                                         "config": asdict(config), "training": training,
                                         "pairs": len(pairs)}, blend)
    else:
        reason += "; the reranker was not kept (no reranking is at least as good)"
    shutil.rmtree(work, ignore_errors=True)
    return RerankerResult(handle.name, name, kept, reason, comparison, training, len(pairs),
                          round(time.monotonic() - started, 1), scorer)


def default_name(corpus: str) -> str:
    """The reranker folder's name for a corpus: letters, digits, '.', '_', '-' only.

    Example:
        >>> default_name("PG manual")
        'PG_manual-reranker'
    """
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in corpus).strip("._")
    return f"{safe or 'corpus'}-reranker"


def check_items(train_items: Items, heldout_items: Items) -> None:
    """Refuse judgements without a judged query to train on or to judge by."""
    if not any(q.relevant for q in train_items.queries):
        raise TrainingDataError("A reranker learns from query judgements (a query and a "
                                "document judged relevant to it); the training part has none. "
                                "Judge search results on the Search or Label page.")
    if not any(q.relevant for q in heldout_items.queries):
        raise TrainingDataError("No held-out query judgement to judge the reranker by (a fifth "
                                "of the judged queries is held out): judge more search results.")
