"""The app process freezes its long-lived heap, so full garbage collections stay cheap.

Streamlit's collection after every run (off in .streamlit/config.toml) and
Python's own full collections walk every tracked object; with torch and a model
loaded that is hundreds of thousands (260 ms at 100,000 documents, holding the
GIL). These tests check the mechanism by counts, never by time.
"""

import gc
import tomllib
from pathlib import Path

import pytest

from searchapp.context import App

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()  # leave the test process as it was


def test_preload_loads_the_model_and_leaves_a_full_collection_little_to_walk(app, unfrozen):
    from searchapp.ui.resources import preload

    tracked_before = len(gc.get_objects())  # what a full collection walks now
    frozen = preload(app)
    tracked_after = len(gc.get_objects())
    assert app.settings.model in app.loaded_models  # the default model is loaded
    assert frozen > 100_000 and gc.get_freeze_count() > 100_000
    assert tracked_before > 100_000  # torch and the model are imported in this process
    assert tracked_after < tracked_before / 20


def test_the_app_config_turns_off_streamlits_collection_after_every_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False


def test_preload_opens_the_indexes_of_embedded_corpora_smallest_first(app, bundled_encoder,
                                                                      monkeypatch, unfrozen):
    from searchapp.intake import table_upload
    from searchapp.intake.ingest import read_table
    from searchapp.jobs.worker import run_until_done
    from searchapp.ui import resources

    app.install_encoder(app.settings.model, bundled_encoder)
    for name, rows in (("small", 3), ("large", 5)):
        csv = "id,text\n" + "".join(f"{i},Document number {i} of {name}\n" for i in range(rows))
        job = table_upload.upload(app, read_table(csv.encode(), f"{name}.csv"), name).job_id
        assert run_until_done(app, job).status == "succeeded"
    reader = App()  # a fresh process' App: no index opened yet
    reader.install_encoder(app.settings.model, bundled_encoder)
    ids = {c: repo_state(reader, c) for c in ("small", "large")}
    monkeypatch.setattr(resources, "PRELOAD_DOCUMENTS", 4)  # room for the small one only
    resources.preload(reader)
    assert reader.indexes.cached_generation(*ids["small"]) is not None
    assert reader.indexes.cached_generation(*ids["large"]) is None
    monkeypatch.setattr(resources, "PRELOAD_DOCUMENTS", 8)
    resources.preload(reader)
    assert reader.indexes.cached_generation(*ids["large"]) is not None
    reader.db.dispose()


def repo_state(app, name: str) -> tuple[int, int]:
    """(corpus id, model id) of a corpus, as the index cache keys it."""
    from searchapp.store import repo

    with app.db.session() as s:
        state = repo.corpus_state(s, name)
    return state.id, app.model_ref(state.model_name).id
