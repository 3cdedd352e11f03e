"""The duplicate threshold of a model: a default, or one calibrated on labelled pairs.

A cosine threshold means different things for different encoders, so each model
has its own. Without labelled data the app uses ``DEFAULT_THRESHOLDS`` (see the
docs/duplicates.md for why 0.80 for all-MiniLM-L6-v2). With a file of labelled pairs
(sentence1, sentence2, label 0/1) ``calibrate`` computes average precision, the
precision-recall curve and the best-F1 threshold with ``searchapp.evaluation.metrics``;
``save_threshold`` stores that threshold in the model's ``info`` JSON, where
``searchapp.pairs.threshold.threshold_for`` finds it from then on.

Example:
    >>> pairs = read_labelled_pairs(b"sentence1,sentence2,label\\na,b,1\\nc,d,0\\n", "p.csv")
    >>> pairs.labels.tolist(), pairs.first
    ([1, 0], ['a', 'c'])
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from searchapp.context import App
from searchapp.duplicates.job_payloads import CalibratePayload
from searchapp.errors import TrainingDataError
from searchapp.evaluation.metrics import pair_metrics, paired_cosine, precision_recall_curve
from searchapp.intake.ingest import read_table
from searchapp.jobs.kinds import submit
from searchapp.pairs.threshold import INFO_KEY
from searchapp.store import repo

FIRST_COLUMNS = ("sentence1", "question1", "text1", "s1", "premise", "a")
SECOND_COLUMNS = ("sentence2", "question2", "text2", "s2", "hypothesis", "b")
LABEL_COLUMNS = ("label", "is_duplicate", "is_paraphrase", "duplicate", "paraphrase")
CURVE_POINTS = 400  # the stored precision-recall curve is thinned to about this many points
SCORE_CHUNK = 256  # pairs encoded between two progress reports


@dataclass(frozen=True)
class LabelledPairs:
    """Text pairs with a 0/1 duplicate label each."""

    first: list[str]
    second: list[str]
    labels: np.ndarray  # (n,) int

    def __len__(self) -> int:
        return len(self.labels)


@dataclass(frozen=True)
class Calibration:
    """A model's scores on labelled pairs: AP, best-F1 threshold, and the PR curve (×100)."""

    model: str
    threshold: float
    ap: float
    f1: float
    precision: float
    recall: float
    pairs: int
    positives: int
    curve: dict  # {"precision": [...], "recall": [...], "threshold": [...]}, ×1, high → low
    source: str = ""
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return asdict(self)


def _pick(columns: list[str], names: tuple[str, ...], role: str) -> str:
    by_lower = {c.lower(): c for c in columns}
    for name in names:
        if name in by_lower:
            return by_lower[name]
    raise TrainingDataError(
        f"No {role} column. Name it one of: {', '.join(names)}. "
        f"Columns in the file: {', '.join(columns)}.")


def read_labelled_pairs(source: bytes | str | Path, filename: str | None = None
                        ) -> LabelledPairs:
    """Read a CSV/TSV/JSONL (optionally .gz) of (sentence1, sentence2, label 0/1) rows.

    Column names are matched case-insensitively (``question1``/``question2``/
    ``is_duplicate`` as in Quora, ``is_paraphrase`` as in MRPC also work).
    """
    frame = read_table(source, filename).frame
    columns = [str(c) for c in frame.columns]
    first = _pick(columns, FIRST_COLUMNS, "first-sentence")
    second = _pick(columns, SECOND_COLUMNS, "second-sentence")
    label = _pick(columns, LABEL_COLUMNS, "label")
    raw = frame[label].astype(str).str.strip()
    bad = raw[~raw.isin(["0", "1", "0.0", "1.0"])]
    if len(bad):
        raise TrainingDataError(
            f"Labels must be 0 or 1; row {bad.index[0] + 1} has {bad.iloc[0]!r}.")
    labels = raw.astype(float).astype(int).to_numpy()
    if labels.sum() == 0 or labels.sum() == len(labels):
        raise TrainingDataError("Calibration needs pairs of both labels (some 1, some 0).")
    return LabelledPairs(frame[first].astype(str).tolist(), frame[second].astype(str).tolist(),
                         labels)


def score_pairs(encoder, pairs: LabelledPairs, on_progress=None) -> np.ndarray:
    """Cosine of each pair, (n,), encoded ``SCORE_CHUNK`` pairs at a time with
    ``on_progress(done, total)`` after each chunk (a text met before is not encoded again).

    The scoring used to be one call: a job's bar sat at 0% for the 56 s it took.
    """
    vectors: dict[str, np.ndarray] = {}
    encode = encoder.encode
    total = len(pairs)
    for start in range(0, total, SCORE_CHUNK):
        chunk = pairs.first[start:start + SCORE_CHUNK] + pairs.second[start:start + SCORE_CHUNK]
        new = [t for t in dict.fromkeys(chunk) if t not in vectors]
        if new:
            vectors.update(zip(new, encode(new), strict=True))
        if on_progress is not None:
            on_progress(min(start + SCORE_CHUNK, total), total)
    u = np.stack([vectors[t] for t in pairs.first])
    v = np.stack([vectors[t] for t in pairs.second])
    return paired_cosine(u, v)


def calibrate(app: App, model_name: str, pairs: LabelledPairs, source: str = "",
              on_progress=None) -> Calibration:
    """Score the pairs with the model; AP, best-F1 threshold and PR curve.

    Example:
        >>> cal = calibrate(app, "all-MiniLM-L6-v2", read_labelled_pairs("mrpc.tsv.gz"))
        ... # doctest: +SKIP
        >>> cal.ap, cal.threshold                                      # doctest: +SKIP
        (85.5, 0.5733)
    """
    started = time.monotonic()
    sims = score_pairs(app.encoder(model_name), pairs, on_progress)  # (n,)
    metrics = pair_metrics(sims, pairs.labels)
    precision, recall, thresholds = precision_recall_curve(sims, pairs.labels)
    step = max(1, len(thresholds) // CURVE_POINTS)
    keep = np.r_[np.arange(0, len(thresholds), step), len(thresholds) - 1]
    curve = {"precision": np.round(precision[keep], 4).tolist(),
             "recall": np.round(recall[keep], 4).tolist(),
             "threshold": np.round(thresholds[keep], 4).tolist()}
    return Calibration(model_name, metrics["threshold"], metrics["ap"], metrics["f1"],
                       metrics["precision"], metrics["recall"], metrics["n"],
                       int(pairs.labels.sum()), curve, source,
                       round(time.monotonic() - started, 2))


def save_threshold(app: App, calibration: Calibration) -> None:
    """Make the calibrated threshold the model's duplicate threshold (stored in models.info)."""
    app.model_ref(calibration.model)  # registers the model on first use
    with app.db.session() as s:
        repo.update_model_info(s, calibration.model, **{INFO_KEY: calibration.as_dict()})


def request_calibration(app: App, model_name: str, source: bytes | str | Path,
                        filename: str | None = None) -> tuple[int, LabelledPairs]:
    """Check a file of labelled pairs, keep a copy in the work folder, queue a ``calibrate`` job.

    A bad file fails here, before any job exists; the job reads the copy, so it never
    depends on the user's file. Returns the job id and the pairs as read (for counts).

    Example:
        >>> job_id, pairs = request_calibration(app, "my-model", "mrpc.tsv")  # doctest: +SKIP
    """
    if isinstance(source, bytes):
        data, name = source, Path(filename or "pairs.csv").name
    else:
        path = Path(source).expanduser()
        read_labelled_pairs(path, filename or path.name)  # a missing or bad file fails here
        data, name = path.read_bytes(), Path(filename or path.name).name
    pairs = read_labelled_pairs(data, name)
    copy = app.settings.work_dir / f"pairs-{uuid.uuid4().hex[:8]}-{name}"
    copy.write_bytes(data)
    job_id = submit(app.db, CalibratePayload(model_name, str(copy), name))
    return job_id, pairs


def calibrate_task(ctx, payload: CalibratePayload) -> dict:
    """Worker task ``calibrate``: score the pairs at ``payload.path``, keep it if ``save``."""
    path = Path(payload.path)
    pairs = read_labelled_pairs(path, payload.filename or path.name)
    ctx.progress(0, len(pairs), f"Scoring {len(pairs)} labelled pairs", force=True)
    calibration = calibrate(
        ctx.app, payload.model, pairs, source=payload.filename or path.name,
        on_progress=lambda done, total: ctx.progress(done, total,
                                                     f"Scored {done:,} of {total:,} pairs"))
    if payload.save:
        save_threshold(ctx.app, calibration)
    ctx.progress(len(pairs), len(pairs), "Done", force=True)
    return calibration.as_dict()
