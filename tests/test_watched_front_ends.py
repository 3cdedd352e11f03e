"""Watched folders through every front end: ``searchapp watch``, the API's /folders (behind
the door, read-only keys refused for changes), and the Upload page's Folders section."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from searchapp.access import keys
from searchapp.cli.main import main
from searchapp.ui.resources import get_app
from searchapp.watching.folders import add_watch, list_watches
from tests.test_api import problem_of

REPO = Path(__file__).resolve().parents[1]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_the_cli_adds_lists_pauses_resumes_and_removes(app, tmp_path, capsys):
    notes = tmp_path / "notes"
    notes.mkdir()
    code, out, _ = cli(capsys, "watch", "add", str(notes), "--corpus", "notes",
                       "--include", "*.md", "--exclude", "drafts/*")
    assert code == 0 and f"Watching {notes}" in out
    code, out, _ = cli(capsys, "watch", "list", "--json")
    [folder] = json.loads(out)["folders"]
    assert folder["path"] == str(notes) and folder["include"] == ["*.md"]
    assert folder["state"] == "watching" and folder["files"] == {
        "seen": 0, "in_step": 0, "waiting": 0, "failed": 0}
    assert cli(capsys, "watch", "pause", str(notes))[1].endswith("paused.\n")
    assert "paused" in cli(capsys, "watch", "list")[1]
    assert cli(capsys, "watch", "resume", str(folder["id"]))[0] == 0
    code, out, _ = cli(capsys, "watch", "remove", str(notes))
    assert code == 0 and "keeps its documents" in out
    code, _, err = cli(capsys, "watch", "pause", str(notes))
    assert code == 1 and err.startswith("error: No watched folder") and "Traceback" not in err
    code, _, err = cli(capsys, "watch", "add", str(tmp_path / "nope"), "--corpus", "notes")
    assert code == 1 and "not there" in err


@pytest.fixture
def api_client(app):
    """The API behind the real door (as ``tests/test_api.py``'s stack, without an encoder)."""
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.testclient import TestClient

    from searchapp.api.app import ApiDispatch, build_api
    from searchapp.config import Settings
    from searchapp.web.door import Door
    from searchapp.web.middleware import DoorMiddleware

    started: list = []
    door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir)}))
    door.db = app.db
    api = build_api(app=lambda: app, start_worker=started.append)
    web = Starlette(middleware=[Middleware(DoorMiddleware, door=door),
                                Middleware(ApiDispatch, api=api)])
    return TestClient(web, base_url="http://127.0.0.1"), started


def test_the_api_lists_adds_under_the_roots_pauses_and_removes(api_client, app, tmp_path,
                                                                monkeypatch):
    client, started = api_client
    writer = {"Authorization": f"Bearer {keys.create(app.db, 'w').key}"}
    reader = {"Authorization": f"Bearer {keys.create(app.db, 'r', read_only=True).key}"}
    problem_of(client.get("/api/v1/folders"), 401)
    notes = tmp_path / "roots" / "notes"
    notes.mkdir(parents=True)
    body = {"path": str(notes), "corpus": "notes", "include": ["*.md"]}
    refused = problem_of(client.post("/api/v1/folders", json=body, headers=writer), 400)
    assert "SEARCHAPP_WATCH_ROOTS" in refused["detail"]
    monkeypatch.setenv("SEARCHAPP_WATCH_ROOTS", str(tmp_path / "roots"))
    problem_of(client.post("/api/v1/folders", json=body, headers=reader), 403)
    made = client.post("/api/v1/folders", json=body, headers=writer)
    assert made.status_code == 201 and made.json()["state"] == "watching" and started
    folder_id = made.json()["id"]
    listed = client.get("/api/v1/folders", headers=reader).json()["folders"]
    assert [f["path"] for f in listed] == [str(notes)]
    paused = client.post(f"/api/v1/folders/{folder_id}/pause", headers=writer)
    assert paused.json()["state"] == "paused"
    assert client.get(f"/api/v1/folders/{folder_id}", headers=reader).json()["paused"]
    assert client.delete(f"/api/v1/folders/{folder_id}", headers=writer).status_code == 200
    problem_of(client.get(f"/api/v1/folders/{folder_id}", headers=reader), 404)
    assert list_watches(app) == []


@pytest.fixture
def page_resources(ui_resources):
    return ui_resources


def test_the_upload_page_shows_the_folders_and_adds_one(page_resources, tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCHAPP_WATCH_ROOTS", str(tmp_path))
    shown = tmp_path / "shown"
    shown.mkdir()
    add_watch(get_app(), shown, "notes")
    at = AppTest.from_file(REPO / "searchapp" / "ui" / "pages" / "upload.py",
                           default_timeout=60).run()
    assert not at.exception
    assert "Folders" in [h.value for h in at.subheader]
    assert str(shown) in at.dataframe[-1].value["Folder"].tolist()
    added = tmp_path / "added"
    added.mkdir()
    at.text_input(key="folders.path").input(str(added))
    at.text_input(key="folders.corpus").input("notes")
    next(b for b in at.button if b.label == "Watch").click().run()
    assert not at.exception and not at.error
    assert sorted(f["path"] for f in list_watches(get_app())) == [str(added), str(shown)]
    at.run().selectbox(key="folders.pick").set_value(f"{added} → notes").run()
    at.button(key="folders.pause").click().run()
    assert [f["paused"] for f in list_watches(get_app()) if f["path"] == str(added)] == [True]


def test_a_file_of_a_watched_folder_opens_in_place_only_while_it_holds_the_same_bytes(
        app, tmp_path, monkeypatch):
    import hashlib
    import sys

    from searchapp.watching.in_place import local_file, on_this_machine, open_in_place
    from tests.test_watched_folders import wait_for

    notes = tmp_path / "notes"
    (notes / "plans").mkdir(parents=True)
    plan = notes / "plans" / "2026.md"
    plan.write_text("# Plans")
    digest = hashlib.sha256(b"# Plans").hexdigest()
    (tmp_path / "outside.md").write_text("# Plans")
    (notes / "link.md").symlink_to(tmp_path / "outside.md")
    add_watch(app, notes, "notes")
    assert local_file(app, "notes", "plans/2026.md", digest) == plan
    assert local_file(app, "other", "plans/2026.md", digest) is None
    assert local_file(app, "notes", "link.md", digest) is None, "never through a link"
    assert local_file(app, "notes", "../outside.md", digest) is None, "never outside it"
    assert [on_this_machine(a) for a in ("127.0.0.1", "::1", "localhost", "0.0.0.0",
                                         "192.168.1.4", None)] == [True] * 3 + [False] * 3

    opened = tmp_path / "opened.txt"
    script = tmp_path / "opener.py"
    script.write_text("import sys\nopen(sys.argv[1], 'w').write(sys.argv[2])\n")
    monkeypatch.setenv("SEARCHAPP_OPENER", f"{sys.executable} {script} {opened}")
    open_in_place(plan)
    assert wait_for(lambda: opened.exists() and opened.read_text(), "the opener") == str(plan)
    plan.write_text("# Plans, changed")
    assert local_file(app, "notes", "plans/2026.md", digest) is None, "changed: the copy"
