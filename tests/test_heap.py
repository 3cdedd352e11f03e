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
    assert app.settings.model in app._encoders  # the default model is loaded
    assert frozen > 100_000 and gc.get_freeze_count() > 100_000
    assert tracked_before > 100_000  # torch and the model are imported in this process
    assert tracked_after < tracked_before / 20


def test_the_app_config_turns_off_streamlits_collection_after_every_run():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["postScriptGC"] is False
