"""The pages' second lock, the password settings and file content in messages, through AppTest.

The password itself is checked at the door, before Streamlit (``test_door_http.py``
with raw clients, ``test_browser_security.py`` in Chromium); here the pages must
stay closed to any session that did not come through that door with a live login.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.base.passwords import hash_password, verify_password
from searchapp.config import Settings
from searchapp.errors import ConfigError
from searchapp.ui.auth import NO_DOOR
from searchapp.web.cookies import COOKIE_NAME
from searchapp.web.door import install
from tests.markup import shown

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 60


@pytest.fixture(autouse=True)
def fresh_resources(ui_resources):
    return ui_resources


def app_test() -> AppTest:
    return AppTest.from_file(REPO / "app.py", default_timeout=TIMEOUT)


def assert_locked(at: AppTest) -> None:
    """No page: the app's name and a message only; no page script ran, no logout button."""
    assert not at.exception
    assert [t.value for t in at.title] == ["searchapp"]
    assert not at.button and not at.text_input and not at.file_uploader
    assert not at.sidebar.button


# ---- settings and hashes -------------------------------------------------------------
def test_no_password_means_no_gate():
    at = app_test().run()
    assert not at.exception and at.title[0].value == "Upload"
    assert not Settings.from_env({}).password_required


def test_hashes_verify_and_bad_settings_stop_the_app():
    stored = hash_password("correct horse", n=2**10)
    assert verify_password("correct horse", stored) and not verify_password("Correct horse",
                                                                               stored)
    assert hash_password("x", n=2**10) != hash_password("x", n=2**10)  # salted
    with pytest.raises(ConfigError, match="SEARCHAPP_PASSWORD_HASH is not a password hash"):
        Settings.from_env({"SEARCHAPP_PASSWORD_HASH": "correct horse"})
    with pytest.raises(ConfigError, match="keep one"):
        Settings.from_env({"SEARCHAPP_PASSWORD": "a", "SEARCHAPP_PASSWORD_HASH": stored})
    assert "correct" not in repr(Settings.from_env({"SEARCHAPP_PASSWORD": "correct"}))


def test_hash_password_command_reads_stdin_and_prints_a_usable_hash():
    proc = subprocess.run([sys.executable, "-m", "searchapp", "hash-password"],
                          input="correct horse\n", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    stored = proc.stdout.strip()
    assert stored.startswith("scrypt:") and "correct" not in proc.stdout
    assert Settings.from_env({"SEARCHAPP_PASSWORD_HASH": stored}).check_password("correct horse")


# ---- the second lock: pages run only for a login of this process' door -------------------
def with_cookie_of(monkeypatch, door, session) -> None:
    """What a websocket that came through the door carries: its login cookie."""
    monkeypatch.setattr("searchapp.ui.auth.request_cookies",
                        lambda: {COOKIE_NAME: door.cookie_value(session)})


@pytest.mark.parametrize("variable", ["SEARCHAPP_PASSWORD", "SEARCHAPP_PASSWORD_HASH"])
def test_with_a_password_and_no_door_in_front_every_page_stays_closed(monkeypatch, variable):
    value = hash_password("correct horse", n=2**10) if variable.endswith("HASH") else "pw"
    monkeypatch.setenv(variable, value)
    at = app_test().run()
    assert_locked(at)
    assert [e.value for e in at.error] == [NO_DOOR]
    at.switch_page("searchapp/ui/pages/search.py").run()  # asking for a page by its path
    assert_locked(at)


def test_a_live_login_of_the_door_opens_the_pages_and_an_ended_one_closes_them(monkeypatch):
    monkeypatch.setenv("SEARCHAPP_PASSWORD", "correct horse")
    door = install()
    session = door.sessions.create()
    with_cookie_of(monkeypatch, door, session)
    at = app_test().run()
    assert not at.exception and at.title[0].value == "Upload"
    assert [b.label for b in at.sidebar.button] == ["Log out"]
    at.sidebar.button[0].click().run()  # sends the browser to /logout?t=... (see the HTTP test)
    assert not at.exception
    door.sessions.end(session.id)
    at.run()
    assert_locked(at)
    assert [w.value for w in at.warning] == ["Your login has ended. [Log in again](/login)."]
    other = door.sessions.create()  # a forged or another process' cookie: still closed
    monkeypatch.setattr("searchapp.ui.auth.request_cookies",
                        lambda: {COOKIE_NAME: door.cookie_value(other)[:-2] + "AA"})
    assert_locked(app_test().run())


def test_a_bad_hash_stops_the_app_with_its_message(monkeypatch):
    monkeypatch.setenv("SEARCHAPP_PASSWORD_HASH", "plain text")
    at = app_test().run()
    assert not at.title and not at.button
    assert "SEARCHAPP_PASSWORD_HASH is not a password hash" in shown(at.error[0].value)


# ---- uploads: any file accepted, file content shown as text ----------------------------
def upload_page() -> AppTest:
    return AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / "upload.py",
                             default_timeout=TIMEOUT).run()


def test_an_unsupported_file_gets_our_message_with_the_formats():
    at = upload_page()
    at.file_uploader[0].upload("setup.exe", b"MZ\x90\x00 a program",
                               "application/octet-stream").run()
    assert not at.exception
    assert [shown(e.value) for e in at.error] == [
        "Cannot read 'setup.exe': it is not a type we read. Add PDF (.pdf), Word (.docx), "
        "PowerPoint (.pptx), OpenDocument text (.odt), OpenDocument presentation (.odp), web "
        "page (.html/.htm/.xhtml), Markdown (.md/.markdown), reStructuredText (.rst), text "
        "(.txt), RTF (.rtf), EPUB (.epub), e-mail (.eml), mailbox (.mbox), PNG image (.png), "
        "JPEG image (.jpg/.jpeg), TIFF image (.tif/.tiff), WebP image (.webp), or an archive of "
        "them (.zip, .tar, .tar.gz, ...)."]
    assert not [b for b in at.button if b.label == "Add and embed"]  # nothing to add


def test_column_names_and_ids_from_the_file_are_escaped_in_messages():
    at = upload_page()
    at.file_uploader[0].upload("m.csv", b"id,text,**meta**\n**x**,a,1\n**x**,b,2\n",
                               "text/csv").run()
    captions = [c.value for c in at.caption]
    assert any("columns id, text, \\*\\*meta\\*\\*." in c for c in captions), captions
    assert any(c.startswith("Kept with each document as metadata:")
               and c.endswith(" \\*\\*meta\\*\\*.") for c in captions), captions
    at.selectbox[0].set_value("id").run()  # the id column (the text columns: a multiselect)
    next(b for b in at.button if b.label == "Upload and embed").click().run()
    assert any("repeats id '\\*\\*x\\*\\*'" in e.value for e in at.error), at.error
