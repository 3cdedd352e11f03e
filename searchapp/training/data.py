"""Labelled training files → pairs or triplets, with the objective detected from the columns.

A file (CSV, TSV, JSONL, ... read by ``searchapp.intake.ingest.read_table``) is one of:

| columns                                         | kind             | default objective |
|-------------------------------------------------|------------------|-------------------|
| sentence1, sentence2, score (any numeric range) | ``regression``     | ``cosent``        |
| sentence1/premise, sentence2/hypothesis, label  | ``classification`` | ``softmax``       |
|   (label ∈ entailment / neutral / contradiction)|                  |                   |
| sentence1, sentence2, label ∈ 0 / 1             | ``contrastive``    | ``contrastive``   |
| anchor, positive, negative                      | ``triplet``        | ``triplet``       |
| sentence1, sentence2 (positive pairs only)      | ``pairs``          | ``mnrl``          |

The user may name the objective instead of ``auto`` and map roles to columns
(``{"sentence1": "question", "score": "sim"}``). Every problem is reported
before any job starts, as a TrainingDataError naming the rows: unknown labels,
non-numeric scores, fewer than 2 classes, empty texts, fewer pairs than a batch.

Example:
    >>> data = load_training_data(
    ...     b"sentence1,sentence2,score\\nA cat.,A kitten.,4.5\\nA cat.,A car.,0.5\\n",
    ...     "sts.csv", batch_size=2)
    >>> data.kind, data.objective, data.score_range, data.labels
    ('regression', 'cosent', (0.5, 4.5), [1.0, 0.0])
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from searchapp.errors import TrainingDataError
from searchapp.intake.ingest import read_table
from searchapp.training.losses import OBJECTIVES, SCORED_OBJECTIVES

ROLES = ("sentence1", "sentence2", "score", "label", "anchor", "positive", "negative")
ROLE_ALIASES = {
    "sentence1": ("sentence1", "premise", "text1", "sentence_a", "question1", "query", "s1"),
    "sentence2": ("sentence2", "hypothesis", "text2", "sentence_b", "question2", "s2"),
    "score": ("score", "similarity", "relatedness", "sim"),
    "label": ("label", "gold_label", "is_paraphrase", "is_duplicate", "duplicate"),
    "anchor": ("anchor",),
    "positive": ("positive", "pos"),
    "negative": ("negative", "neg"),
}
NLI_LABELS = ("contradiction", "entailment", "neutral")  # sentence-transformers' order
BINARY_LABELS = {"0": 0, "1": 1, "false": 0, "true": 1}
DEFAULT_OBJECTIVE = {"regression": "cosent", "classification": "softmax",
                     "contrastive": "contrastive", "triplet": "triplet", "pairs": "mnrl"}
# Why ``auto`` picks what it picks, for the Models page and the CLI.
AUTO_REASONS = {
    "regression": "CoSENT did best on scored pairs in our measurements: 4 epochs on STSb "
                  "train reach STSb test Spearman 86.37 (mean of 3 seeds), against 85.60 "
                  "for cosine regression (sentence-transformers' fit, same settings); "
                  "see benchmarks/results/finetune_quality_cosent_4ep_4evals*.json.",
    "classification": "softmax over (u, v, |u-v|) is the paper's objective for NLI labels.",
    "contrastive": "online contrastive loss is the standard for 0/1 duplicate labels.",
    "triplet": "the triplet loss uses each anchor, positive and negative as given.",
    "pairs": "positive pairs only: the other pairs of a batch serve as negatives (MNRL).",
}
SHOW_ROWS = 5


@dataclass
class TrainingData:
    """Texts per column (``texts[c][i]``: column c of example i) plus labels, ready to train."""

    kind: str
    objective: str
    columns: dict[str, str]  # role → the file's column
    texts: list[list[str]]
    labels: list[float] | None = None  # class ids, 0/1, or scores rescaled to [0, 1]
    classes: list[str] | None = None  # class names for softmax, by id
    score_range: tuple[float, float] | None = None  # the original range of the scores
    source: str = ""

    def __len__(self) -> int:
        return len(self.texts[0])

    def subset(self, rows: list[int]) -> TrainingData:
        """The examples at ``rows``, in that order."""
        texts = [[col[i] for i in rows] for col in self.texts]
        labels = None if self.labels is None else [self.labels[i] for i in rows]
        return replace(self, texts=texts, labels=labels)

    def describe(self) -> str:
        """One line for people: what was detected and how it will be trained."""
        cols = ", ".join(f"{role}={col}" for role, col in self.columns.items())
        line = f"{len(self)} {self.kind} examples ({cols}); objective {self.objective}"
        if self.score_range:
            lo, hi = self.score_range
            line += f"; scores {lo:g}–{hi:g} rescaled to 0–1"
        if self.classes:
            line += f"; classes {', '.join(self.classes)}"
        return line

    def preview(self, n: int = 5) -> pd.DataFrame:
        """The first ``n`` examples as the trainer sees them (rescaled scores, class names)."""
        roles = [r for r in self.columns if r not in ("score", "label")]
        frame = pd.DataFrame({role: col[:n] for role, col in zip(roles, self.texts, strict=True)})
        if self.labels is not None:
            values = self.labels[:n]
            if self.classes:
                values = [self.classes[int(v)] for v in values]
            frame["score" if self.score_range else "label"] = values
        return frame

    def to_card(self) -> dict:
        """What a model card records about its training data."""
        return {"source": self.source, "kind": self.kind, "examples": len(self),
                "columns": self.columns, "classes": self.classes,
                "score_range": list(self.score_range) if self.score_range else None}


def load_training_data(source: bytes | str | Path, filename: str | None = None, *,
                       objective: str = "auto", columns: dict[str, str] | None = None,
                       batch_size: int = 16, score_range: tuple[float, float] | None = None,
                       classes: list[str] | None = None) -> TrainingData:
    """Read, detect, validate and convert a labelled file (see the module docstring).

    ``score_range`` and ``classes`` let a dev file reuse the training file's
    scaling and class ids.
    """
    table = read_table(source, filename)
    name = filename or (Path(source).name if isinstance(source, str | Path) else "upload")
    frame, label_of = table.frame, table.row_label
    found = _find_columns(frame, columns or {}, name)
    kind = _detect_kind(frame, found, label_of, name)
    objective = _choose_objective(kind, objective, found, name)
    text_roles = _text_roles(objective, found)
    used = {role: found[role] for role in text_roles}
    texts = [frame[found[role]].astype(str).str.strip().tolist() for role in text_roles]
    labels, class_names, scale = None, None, None
    keep = list(range(len(frame)))
    if objective in SCORED_OBJECTIVES:
        role = "score" if "score" in found else "label"
        used[role] = found[role]
        labels, scale = _scores(frame[found[role]], label_of, name, score_range)
    elif objective == "contrastive" or (objective == "mnrl" and "label" in found):
        used["label"] = found["label"]
        labels = _binary(frame[found["label"]], label_of, name, need_both=objective != "mnrl")
        if objective == "mnrl":  # positive pairs only
            keep = [i for i, y in enumerate(labels) if y == 1]
            labels = None
    elif objective == "softmax":
        used["label"] = found["label"]
        labels, class_names = _classes(frame[found["label"]], label_of, name, classes)
    _check_texts(texts, keep, list(used)[: len(texts)], label_of, name)
    data = TrainingData(kind, objective, used, texts, labels, class_names, scale, name)
    data = data.subset(keep) if len(keep) < len(frame) else data
    if len(data) < batch_size:
        raise TrainingDataError(
            f"{name}: {len(data)} usable examples, fewer than one batch of {batch_size}. "
            "Add examples or lower the batch size.")
    return data


def split_dev(data: TrainingData, fraction: float = 0.1, seed: int = 42
              ) -> tuple[TrainingData, TrainingData]:
    """Hold out ``fraction`` of the examples (at least 2) as a dev set, chosen with ``seed``."""
    rows = list(range(len(data)))
    random.Random(seed).shuffle(rows)
    n_dev = max(2, round(fraction * len(rows)))
    return data.subset(sorted(rows[n_dev:])), data.subset(sorted(rows[:n_dev]))


# ---- detection ----------------------------------------------------------------------
def _find_columns(frame: pd.DataFrame, mapping: dict[str, str], name: str) -> dict[str, str]:
    unknown_roles = [r for r in mapping if r not in ROLES]
    if unknown_roles:
        raise TrainingDataError(f"Unknown role(s) {unknown_roles} in the column mapping; "
                                f"roles are: {', '.join(ROLES)}.")
    mapping = {r: c for r, c in mapping.items() if c}
    missing = [c for c in mapping.values() if c not in frame.columns]
    if missing:
        raise TrainingDataError(f"{name} has no column(s) {missing}; its columns are: "
                                f"{', '.join(map(str, frame.columns))}.")
    found = dict(mapping)
    by_lower = {str(c).lower(): c for c in frame.columns}
    taken = set(found.values())
    for role in ROLES:
        if role in found:
            continue
        for alias in ROLE_ALIASES[role]:
            col = by_lower.get(alias)
            if col is not None and col not in taken:
                found[role] = col
                taken.add(col)
                break
    return found


def _detect_kind(frame: pd.DataFrame, found: dict, label_of, name: str) -> str:
    if {"anchor", "positive", "negative"} <= found.keys():
        return "triplet"
    if {"sentence1", "sentence2"} <= found.keys():
        if "score" in found:
            return "regression"
        if "label" in found:
            values = {str(v).strip().lower() for v in frame[found["label"]]}
            if values <= set(NLI_LABELS):
                return "classification"
            if values <= set(BINARY_LABELS):
                return "contrastive"
            nli_like = len(values & set(NLI_LABELS)) >= len(values & set(BINARY_LABELS))
            valid = NLI_LABELS if nli_like else ("0", "1")
            _unknown(frame[found["label"]], valid, label_of, name)
        return "pairs"
    if {"anchor", "positive"} <= found.keys():
        return "pairs"
    raise TrainingDataError(
        f"Cannot tell what {name} trains: its columns are {', '.join(map(str, frame.columns))}. "
        "Expected sentence1, sentence2 and score (similarity), sentence1/premise, "
        "sentence2/hypothesis and label (NLI or 0/1), or anchor, positive and negative; "
        "or map your columns to these roles.")


def _choose_objective(kind: str, objective: str, found: dict, name: str) -> str:
    if objective == "auto":
        return DEFAULT_OBJECTIVE[kind]
    if objective not in OBJECTIVES:
        raise TrainingDataError(f"Unknown objective {objective!r}; use auto or one of: "
                                f"{', '.join(OBJECTIVES)}.")
    pair = {"sentence1", "sentence2"} <= found.keys()
    needs = {
        "softmax": (pair and "label" in found, "sentence1, sentence2 and label"),
        "cosine": (pair and ("score" in found or "label" in found),
                   "sentence1, sentence2 and score"),
        "contrastive": (pair and "label" in found, "sentence1, sentence2 and a 0/1 label"),
        "triplet": ({"anchor", "positive", "negative"} <= found.keys(),
                    "anchor, positive and negative"),
        "mnrl": (pair or {"anchor", "positive"} <= found.keys(),
                 "sentence1 and sentence2 (or anchor and positive)"),
    }
    ok, what = needs.get(objective, needs["cosine"])
    if not ok:
        raise TrainingDataError(f"Objective {objective} needs columns {what}; {name} has "
                                f"{kind} data. Use --objective auto or map the columns.")
    return objective


def _text_roles(objective: str, found: dict) -> list[str]:
    if objective in ("triplet", "mnrl") and "anchor" in found:
        return [r for r in ("anchor", "positive", "negative") if r in found]
    return ["sentence1", "sentence2"]


# ---- validation and conversion --------------------------------------------------------
def _rows(label_of, rows: list[int]) -> str:
    shown = ", ".join(label_of(i) for i in rows[:SHOW_ROWS])
    return shown + (f" and {len(rows) - SHOW_ROWS} more" if len(rows) > SHOW_ROWS else "")


def _unknown(values: pd.Series, valid, label_of, name: str):
    bad = [i for i, v in enumerate(values) if str(v).strip().lower() not in valid]
    examples = sorted({str(values.iloc[i]) for i in bad})[:SHOW_ROWS]
    raise TrainingDataError(
        f"{name}: unknown label(s) {examples} in {_rows(label_of, bad)}; "
        f"valid labels are: {', '.join(valid)}.")


def _check_texts(texts: list[list[str]], keep: list[int], roles: list[str], label_of,
                 name: str) -> None:
    for role, col in zip(roles, texts, strict=True):
        empty = [i for i in keep if not col[i]]
        if empty:
            raise TrainingDataError(f"{name}: empty {role} text in {_rows(label_of, empty)}. "
                                    "Fill in or remove those rows.")


def _scores(values: pd.Series, label_of, name: str, score_range=None):
    numbers = pd.to_numeric(values.astype(str).str.strip(), errors="coerce")
    bad = [i for i, ok in enumerate(numbers.notna() & (values.astype(str).str.strip() != ""))
           if not ok]
    if bad:
        raise TrainingDataError(
            f"{name}: non-numeric score(s) {sorted({str(values.iloc[i]) for i in bad})[:3]} "
            f"in {_rows(label_of, bad)}. Scores must be numbers (any range).")
    lo, hi = score_range or (float(numbers.min()), float(numbers.max()))
    if hi <= lo:
        raise TrainingDataError(f"{name}: every score is {lo:g}; scores need at least two "
                                "different values to learn from.")
    scaled = ((numbers - lo) / (hi - lo)).clip(0.0, 1.0)
    return [float(x) for x in scaled], (lo, hi)


def _binary(values: pd.Series, label_of, name: str, need_both: bool) -> list[int]:
    norm = [str(v).strip().lower() for v in values]
    if any(v not in BINARY_LABELS for v in norm):
        _unknown(values, ("0", "1"), label_of, name)
    labels = [BINARY_LABELS[v] for v in norm]
    if need_both and len(set(labels)) < 2:
        raise TrainingDataError(f"{name}: every label is {labels[0]}; fewer than 2 classes. "
                                "Pairs labelled 1 (duplicate) and 0 (not) are both needed.")
    return labels


def _classes(values: pd.Series, label_of, name: str, classes: list[str] | None = None):
    norm = [str(v).strip().lower() for v in values]
    if classes is None:
        present = set(norm)
        classes = list(NLI_LABELS) if present <= set(NLI_LABELS) else sorted(present)
        if len(present) < 2:
            raise TrainingDataError(f"{name}: every label is {norm[0]!r}; fewer than 2 classes "
                                    "to learn from.")
    index = {c: i for i, c in enumerate(classes)}
    if any(v not in index for v in norm):
        _unknown(values, classes, label_of, name)
    return [index[v] for v in norm], list(classes)
