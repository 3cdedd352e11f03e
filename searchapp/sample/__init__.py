"""The sample corpus shipped with the app: 3,025 image and scene captions.

The sentences come from the STS benchmark (CC BY-SA; see ``README.md`` beside
this file), so whoever shows or loads them must show ``ATTRIBUTION`` too.

Example:
    >>> app = App(Settings.from_env({"SEARCHAPP_DATABASE_URL": "sqlite://"}))
    >>> summary = load_sample(app)
    >>> summary.corpus, summary.added
    ('captions', 3025)
"""

from __future__ import annotations

from pathlib import Path

from searchapp.config import Settings  # noqa: F401 - used in the doctest
from searchapp.context import App
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import UploadSummary, upload

SAMPLE_FILE = Path(__file__).with_name("captions.csv.gz")
SAMPLE_CORPUS = "captions"
SAMPLE_SIZE = 3025
ATTRIBUTION = (
    "Sample: 3,025 image and scene captions from the STS benchmark (Cer et al., SemEval 2017): "
    "PASCAL VOC-2008 image descriptions (Rashtchian et al., 2010) and a subset of the "
    "Stanford NLI corpus (The Stanford NLP Group). License: CC BY-SA 4.0 "
    "(https://creativecommons.org/licenses/by-sa/4.0/)."
)


def load_sample(app: App, corpus: str = SAMPLE_CORPUS) -> UploadSummary:
    """Upload the sample captions into ``corpus`` and queue their embedding (idempotent)."""
    return upload(app, read_table(SAMPLE_FILE), corpus, text_column="text", id_column="id")
