"""Hard negatives mined from the corpus under its current model, for the learn job.

``CorpusView`` is the corpus as the miners need it (texts, vectors, neighbours,
lexical hits, the best passage); ``mine`` turns query judgements into triplets
with hard negatives (``negatives.mine_examples``) and judged pairs into
contrastive rows.

Example:
    >>> mined = mine(app, "faq", "all-MiniLM-L6-v2", items, report)    # doctest: +SKIP
    >>> mined["summary"]["pairs"]                                      # doctest: +SKIP
    12
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from searchapp.context import App
from searchapp.embedding.passages import with_head
from searchapp.evaluation.encoded import handle_for
from searchapp.evaluation.judged import Items
from searchapp.search.service import search
from searchapp.store import repo
from searchapp.training.negatives import anchors_of, mine_examples, pair_rows
from searchapp.training.recipe import Recipe, recipe_named


class CorpusView:
    """The corpus under its current model, as the miners need it: texts, vectors, neighbours."""

    def __init__(self, app: App, corpus: str, model: str):
        self.app, self.model = app, model
        self.handle = handle_for(app, corpus, model)
        with app.db.session() as s:
            rows = repo.document_texts(s, self.handle.corpus_id)
        self.texts = {ext: text for _, (ext, text) in rows.items()}
        self.pk = {ext: pk for pk, (ext, _) in rows.items()}
        self.ext = {pk: ext for ext, pk in self.pk.items()}

    def vectors_of(self, ids: list[str]) -> np.ndarray:
        """The model's vectors of documents by id, (n, dim) in the order given."""
        labels, matrix = self.handle.index.vectors_of([self.pk[i] for i in ids])
        row = {int(label): r for r, label in enumerate(labels.tolist())}
        return matrix[[row[self.pk[i]] for i in ids]]

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.app.encoder(self.model).encode(texts)

    def neighbours(self, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
        labels, scores = self.handle.index.search(np.asarray(vectors, np.float32), k)
        return [[(self.ext[int(label)], float(score)) for label, score in zip(ls, ss, strict=True)
                 if int(label) in self.ext] for ls, ss in zip(labels, scores, strict=True)]

    def lexical(self, queries: list[str], k: int = 30) -> list[list[str]]:
        """Each query's ``k`` best lexical (BM25) hits, by document id."""
        return [[h.id for h in search(self.app, self.handle, q, k=k, mode="lexical")]
                if q.strip() else [] for q in queries]

    def best_passage(self, query: np.ndarray, doc: str) -> str:
        """The document's passage nearest to ``query`` as it was encoded (with its heading),
        or its whole text when it is one passage."""
        pk, passages = self.pk[doc], self.handle.passages
        if passages is None or not passages.passage_counts.get(pk):
            return self.texts[doc]
        best, _ = passages.best_passages(np.asarray(query, np.float32), [pk])[pk]
        with self.app.db.session() as s:
            spans = repo.passage_spans(s, [pk]).get(pk)
            layout = repo.layouts_by_id(s, [pk]).get(pk)
        if spans is None or best >= len(spans):
            return self.texts[doc]
        a, b = (int(x) for x in spans[best])
        head = next((p[3] for p in layout or [] if len(p) > 3 and p[0] <= a < p[1]), None)
        return with_head(self.texts[doc][a:b], head)


def mine(app: App, corpus: str, model: str, items: Items, report,
         recipe: Recipe | None = None) -> dict:
    """Query judgements → triplets with hard negatives; judged pairs → contrastive rows.

    ``recipe`` says whether lexical hits and best passages are mined too (None: the
    recipe of jobs queued before recipes). The result is plain JSON (a step's result).
    """
    recipe = recipe or recipe_named("before")
    view = CorpusView(app, corpus, model)
    anchors = [a for a in anchors_of(Items(queries=items.queries)) if a.positive in view.texts]
    report(0, len(anchors), f"{len(anchors)} relevant documents")
    examples, summary = mine_examples(
        anchors, view.texts, view.vectors_of, view.encode, view.neighbours,
        report=lambda d, t: report(d, t, f"{d} of {t}"),
        lexical=view.lexical if recipe.lexical else None,
        passage_of=view.best_passage if recipe.passages else None)
    pairs = pair_rows(items, view.texts)
    report(1, 1, f"{len(examples)} triplets, {len(pairs)} judged pairs")
    return {"examples": [asdict(e) for e in examples + pairs],
            "summary": {**summary.as_dict(), "pairs": len(pairs)}}
