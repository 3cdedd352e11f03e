import pytest

from searchapp.config import Settings
from searchapp.embedding.models import list_models, model_path, validate_name, write_card
from searchapp.errors import ModelError


def test_bundled_model_resolves_offline():
    settings = Settings.from_env()
    path = model_path("all-MiniLM-L6-v2", settings)
    assert (path / "model.safetensors").is_file()


def test_local_models_are_listed_with_their_card(tiny_bert):
    import shutil

    settings = Settings.from_env()
    target = settings.models_dir / "tiny"
    shutil.copytree(tiny_bert, target)
    write_card(target, {"objective": "cosine", "metrics": {"after": {"spearman": 1.0}}})
    models = {m.name: m for m in list_models(settings)}
    assert models["tiny"].card["objective"] == "cosine"
    assert model_path("tiny", settings) == target


def test_unknown_model_lists_known_ones():
    with pytest.raises(ModelError, match="Known models: all-MiniLM-L6-v2"):
        model_path("no-such-model", Settings.from_env())


@pytest.mark.parametrize("bad", ["", "../x", "a b", "all-MiniLM-L6-v2"])
def test_model_names_are_checked(bad):
    with pytest.raises(ModelError):
        validate_name(bad)
