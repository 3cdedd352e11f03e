"""Evaluation service: how good a model is on scored or labelled pairs.

- ``metrics``: Spearman/Pearson on STS scores; AP, best F1 and the precision-recall curve
  on 0/1 pairs (the evaluators of Sentence-BERT's paper and of sentence-transformers).
- ``files``: the same on a labelled file, for ``searchapp evaluate``.
"""
