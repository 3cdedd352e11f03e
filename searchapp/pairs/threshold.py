"""A model's duplicate threshold: the one calibrated on labelled pairs, else its default.

A cosine threshold means different things for different encoders, so each model
has its own. Without labelled data the app uses ``DEFAULT_THRESHOLDS`` (see
docs/duplicates.md for why 0.80 for all-MiniLM-L6-v2 and 0.75 for use-multilingual-v3);
a calibration (``searchapp.duplicates.calibration``) stores a better one in the model's ``info``
JSON under ``INFO_KEY``. Read here, below both duplicates and judgements, which both
decide "the same question?" with it.

Example:
    >>> threshold_for(app, "all-MiniLM-L6-v2")                    # doctest: +SKIP
    (0.8, 'default')
"""

from __future__ import annotations

from searchapp.context import App
from searchapp.errors import InvalidParameterError, check_range
from searchapp.store import repo

# Each model's default sits at the same precision on MRPC (about 82%): 0.80 for MiniLM
# (precision 81.9%, recall 66.5%), 0.75 for the multilingual USE (82.4%, 72.7%); its
# cosines run lower, and at 0.80 it would show few of the translated pairs.
DEFAULT_THRESHOLDS = {"all-MiniLM-L6-v2": 0.80, "use-multilingual-v3": 0.75}
FALLBACK_THRESHOLD = 0.80  # models without a default or a calibration
INFO_KEY = "duplicate_threshold"  # models.info[INFO_KEY] = {"threshold": ..., "ap": ..., ...}


def stored_calibration(app: App, model_name: str) -> dict | None:
    """The calibration saved for a model (a Calibration as a dict), if any."""
    with app.db.session() as s:
        model = repo.find_model(s, model_name)
        return (model.info or {}).get(INFO_KEY) if model else None


def threshold_for(app: App, model_name: str) -> tuple[float, str]:
    """The model's duplicate threshold and where it comes from ("calibrated" or "default")."""
    stored = stored_calibration(app, model_name)
    if stored:
        return float(stored["threshold"]), "calibrated"
    return DEFAULT_THRESHOLDS.get(model_name, FALLBACK_THRESHOLD), "default"


def resolve_threshold(app: App, model_name: str, threshold: float | None) -> float:
    """``threshold`` checked to lie in [0, 1], or the model's own when None."""
    if threshold is None:
        return threshold_for(app, model_name)[0]
    try:
        return float(check_range("threshold", float(threshold), 0.0, 1.0))
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"threshold must be a number; got {threshold!r}.") from exc
