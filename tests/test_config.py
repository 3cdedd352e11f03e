import pytest

from searchapp.config import Settings
from searchapp.errors import ConfigError


def test_defaults_put_everything_in_the_data_dir(tmp_path):
    s = Settings.from_env({"SEARCHAPP_DATA_DIR": str(tmp_path / "d")})
    assert s.database_url == f"sqlite:///{tmp_path / 'd' / 'searchapp.db'}"
    assert s.model == "all-MiniLM-L6-v2"
    assert s.device == "auto"
    assert s.index_dir == tmp_path / "d" / "indexes"


def test_invalid_device_lists_valid_values():
    with pytest.raises(ConfigError, match="auto, cpu, cuda"):
        Settings.from_env({"SEARCHAPP_DEVICE": "tpu"})


def test_database_url_must_be_a_url():
    with pytest.raises(ConfigError, match="SQLAlchemy URL"):
        Settings.from_env({"SEARCHAPP_DATABASE_URL": "/tmp/x.db"})


def test_data_dir_that_is_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(ConfigError, match="is a file"):
        Settings.from_env({"SEARCHAPP_DATA_DIR": str(f)})
