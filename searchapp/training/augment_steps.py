"""The learn job's Augmented SBERT steps, tried when there are few judgements.

A cross-encoder trained on the same judgements labels candidate pairs
(``silver``, by ``augment``), a second bi-encoder trains on gold and silver, and
it is kept only if measurably better than the first on a part of the training
judgements both left out (``choose``). Each step's result is saved (``Steps``),
so a killed job resumes with the next. The cross-encoder and the encoder load
transformers, so they are imported when a step runs.

Example:
    >>> chosen, info = augment_steps(app, "faq", payload, steps, train, dev,
    ...                              examples, gold, hyper)            # doctest: +SKIP
    >>> info["kept"], info["reason"]                                   # doctest: +SKIP
    (False, 'augmented against judgements alone: not distinguishable ...')
"""

from __future__ import annotations

import random
from dataclasses import asdict
from pathlib import Path

import numpy as np

from searchapp.context import App
from searchapp.embedding.models import model_path
from searchapp.evaluation.corpus import compare, evaluate
from searchapp.evaluation.encoded import encode_corpus
from searchapp.evaluation.judged import Items
from searchapp.training import augment
from searchapp.training.bi_training import train_step
from searchapp.training.job_payloads import LearnPayload
from searchapp.training.job_steps import Report, Steps
from searchapp.training.mining import CorpusView
from searchapp.training.negatives import Example


def augment_steps(app: App, corpus: str, payload: LearnPayload, steps: Steps,
                  train_items: Items, dev_items: Items, examples: list[Example], gold: dict,
                  hyper: dict) -> tuple[dict, dict]:
    """Cross-encoder, silver pairs, a second bi-encoder, and the choice between the two:
    (the chosen training's result, what the card says about augmentation)."""
    from searchapp.embedding.cross_encoder import CrossEncoder
    from searchapp.training.cross_train import CrossConfig, train

    base = payload.base
    cross_dir = steps.folder / "cross"
    if not (cross_dir / "model" / "cross_encoder.json").is_file():
        ce = CrossEncoder.from_bi_encoder(model_path(base, app.settings), app.settings.device)
        pairs = augment.gold_pairs(examples)
        config = CrossConfig(seed=hyper.get("seed") or 42, max_steps=hyper.get("max_steps"),
                             checkpoint_every=hyper.get("checkpoint_every") or 50)
        cross_result = train(ce, pairs, cross_dir, config,
                             progress=steps.reporter("cross", "steps"))
        ce.save(cross_dir / "model")
        steps.save("cross", {"pairs": len(pairs), **cross_result})
    silver_rows = steps.done("silver")
    if silver_rows is None:
        ce = CrossEncoder.load(cross_dir / "model", app.settings.device)
        silver_rows = steps.save("silver", silver(app, corpus, base, train_items, examples, ce,
                                                  steps.reporter("silver", "pairs")))
    augmented = train_step(app, steps, "augmented", base,
                           [Example(**e) for e in silver_rows["examples"]], hyper)
    choice = steps.done("choose")
    if choice is None:
        choice = steps.save("choose", choose(app, corpus, gold, augmented, dev_items,
                                             steps.reporter("choose", "documents")))
    info = {"tried": True, "kept": choice["kept"], "reason": choice["reason"],
            "dev": choice.get("comparison"), "silver": silver_rows["summary"],
            "cross_encoder": steps.done("cross")}
    return (augmented if choice["kept"] else gold), info


def silver(app: App, corpus: str, base: str, items: Items, examples: list[Example], ce,
           report: Report) -> dict:
    """Candidate pairs around the judged texts (and a sample of others), labelled by the
    cross-encoder ``ce`` (``augment.augment``): the silver rows and their summary."""
    view = CorpusView(app, corpus, base)
    anchors: dict[str, tuple[str, str | None]] = {}  # text → (group, document id or None)
    for q in items.queries:
        anchors.setdefault(q.query, (f"query\x1f{q.query}", None))
    for p in items.pairs:
        for d in (p.a, p.b):
            if d in view.texts:
                anchors.setdefault(view.texts[d], (f"doc\x1f{d}", d))
    others = sorted(set(view.texts) - {d for _, d in anchors.values() if d})
    for d in random.Random(7).sample(others, min(augment.EXTRA_ANCHORS, len(others))):
        anchors.setdefault(view.texts[d], (f"doc\x1f{d}", d))
    ordered = list(anchors.items())

    def candidates(rows):
        docs = [d for _, (_, d) in ordered if d is not None]
        queries = [t for t, (_, d) in ordered if d is None]
        vectors = {}
        if docs:
            vectors.update(zip(docs, view.vectors_of(docs), strict=True))
        if queries:
            vectors.update(zip(queries, view.encode(queries), strict=True))
        matrix = np.stack([vectors[d if d is not None else t] for t, (_, d) in ordered])
        near = view.neighbours(matrix, augment.SILVER_K + 1)
        return [[doc for doc, _ in n if doc != d][:augment.SILVER_K]
                for n, (_, (_, d)) in zip(near, ordered, strict=True)]

    judged = {(e.anchor, e.positive) for e in examples} | {(e.anchor, e.negative)
                                                           for e in examples}

    def score(pairs):
        return ce.predict(pairs, progress=lambda d, t: report(d, t, f"{d:,} of {t:,} pairs"))

    out, summary = augment.augment(examples, [(g, t) for t, (g, _) in ordered], candidates,
                                   view.texts, score, judged)
    return {"examples": [asdict(e) for e in out], "summary": summary.as_dict()}


def choose(app: App, corpus: str, gold: dict, augmented: dict, dev: Items,
           report: Report) -> dict:
    """Keep the augmented model only if it is better than the gold-only one on ``dev``."""
    from searchapp.embedding.encoder import SiameseEncoder

    if not dev.queries and len({p.label for p in dev.pairs}) < 2:
        return {"kept": False, "reason": "too few judgements left out to tell whether "
                "augmentation helps; the model trained on the judgements alone is kept"}
    runs = []
    for trained in (gold, augmented):
        name = str(Path(trained["folder"]))
        encoder = SiameseEncoder.load(name, device=app.settings.device,
                                      precision=app.settings.precision)
        try:  # judged pairs alone need only their documents' vectors
            only = dev.documents() if not dev.queries else None
            handle = encode_corpus(app, corpus, name, report, encoder=encoder, only=only)
            runs.append(evaluate(app, handle, dev))
        finally:
            app.forget_encoder(name)
    comparison = compare(*runs)
    kept = comparison.verdict == "better"
    return {"kept": kept, "comparison": comparison.as_dict(),
            "reason": ("augmentation measurably helped on the judgements left out of training"
                       if kept else f"augmented against judgements alone: "
                                    f"{comparison.verdict} on the judgements left out of "
                                    "training, so the simpler model is kept")}
