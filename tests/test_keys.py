"""API keys: shown once, stored as SHA-256 only, read-only or read-write, revoked by name or
id; from the CLI and from the Settings page."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.access import keys
from searchapp.cli.main import main
from searchapp.errors import AlreadyExistsError, InvalidParameterError, NotFoundError

PAGES = Path(__file__).resolve().parents[1] / "searchapp" / "ui" / "pages"


def test_only_the_hash_of_a_key_is_stored(app):
    made = keys.create(app.db, "helpdesk", read_only=True)
    con = sqlite3.connect(app.settings.data_dir / "searchapp.db")
    stored = con.execute("SELECT * FROM api_keys").fetchall()
    con.close()
    assert made.key not in repr(stored)
    assert hashlib.sha256(made.key.encode()).hexdigest() in repr(stored)
    assert keys.check(app.db, made.key).read_only
    assert keys.check(app.db, made.key[:-1]) is None


def test_names_are_checked_unique_and_revoked_by_name_or_id(app):
    first = keys.create(app.db, "a")
    with pytest.raises(AlreadyExistsError, match="exists already"):
        keys.create(app.db, "a")
    with pytest.raises(InvalidParameterError, match="Invalid key name"):
        keys.create(app.db, "42")
    second = keys.create(app.db, "b")
    assert keys.revoke(app.db, str(second.row.id)).name == "b"
    with pytest.raises(NotFoundError, match="Existing keys: a"):
        keys.revoke(app.db, "b")
    assert keys.check(app.db, second.key) is None and keys.check(app.db, first.key).name == "a"


def test_the_cli_creates_lists_and_revokes_keys(app, capsys):
    assert main(["keys", "create", "--name", "nightly", "--read-only"]) == 0
    key = capsys.readouterr().out.splitlines()[1]
    assert key.startswith("sa_") and keys.check(app.db, key).name == "nightly"
    assert main(["keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert "nightly" in listing and "read-only" in listing and key not in listing
    assert main(["keys", "revoke", "nightly"]) == 0 and keys.check(app.db, key) is None
    assert main(["keys", "revoke", "nightly"]) == 1
    assert capsys.readouterr().err.startswith("error: No API key named 'nightly'")


def test_the_settings_page_creates_shows_once_and_revokes_a_key(ui_resources):
    at = AppTest.from_file(PAGES / "settings.py", default_timeout=60).run()
    at.text_input[0].input("helpdesk-form")
    at.checkbox[0].check()
    at.button[0].click().run()
    assert not at.exception
    shown = at.code[0].value
    from searchapp.ui.resources import get_app

    app = get_app()
    assert keys.check(app.db, shown).read_only
    at.run()  # the next run does not show the key again
    assert not at.code
    revoke = next(b for b in at.button if b.label == "Revoke key")
    revoke.click().run()
    assert keys.check(app.db, shown) is None
