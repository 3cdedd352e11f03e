"""Suggestions and the search history through the API and the CLI: each user's own."""

from __future__ import annotations

from searchapp.access import keys
from searchapp.cli.main import main
from searchapp.jobs.worker import work
from tests.test_api import problem_of, stack  # noqa: F401 - the fixture

DOCS = [{"id": "install.md", "text": "Install the server", "meta": {"title": "Installing"}},
        {"id": "port", "text": "The default port is 8080", "meta": {"title": "Default port"}},
        {"id": "ports2", "text": "Change the default port", "meta": {}}]


def _corpus(client) -> None:
    client.post("/api/v1/corpora", json={"name": "faq"})
    assert client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS}).json()["added"]


def test_suggest_route_and_each_keys_own_history(stack, app):  # noqa: F811
    make, _ = stack
    client, _door = make({"SEARCHAPP_PASSWORD": "pw"})
    one = {"Authorization": f"Bearer {keys.create(app.db, 'one').key}"}
    two = {"Authorization": f"Bearer {keys.create(app.db, 'two', read_only=True).key}"}
    _corpus_as(client, one)
    work(app, stop_when_idle=True)
    got = client.get("/api/v1/corpora/faq/suggest", params={"q": "def"}, headers=one).json()
    assert {"text": "Default port", "kind": "title", "count": 2} in got
    assert client.post("/api/v1/corpora/faq/search", json={"query": "default port 8080"},
                       headers=one).status_code == 200
    mine = client.get("/api/v1/corpora/faq/suggest", params={"q": "def"}, headers=one).json()
    assert mine[0] == {"text": "default port 8080", "kind": "recent", "count": 0}
    theirs = client.get("/api/v1/corpora/faq/suggest", params={"q": "def"}, headers=two).json()
    assert all(s["kind"] != "recent" for s in theirs)
    listed = client.get("/api/v1/history", params={"corpus": "faq"}, headers=one).json()
    assert [s["query"] for s in listed["searches"]] == ["default port 8080"]
    assert client.get("/api/v1/history", headers=two).json() == {"searches": []}
    assert client.delete("/api/v1/history", headers=two).json() == {"cleared": 0}
    assert client.delete("/api/v1/history", headers=one).json() == {"cleared": 1}
    assert client.get("/api/v1/history", headers=one).json() == {"searches": []}
    problem_of(client.get("/api/v1/corpora/nope/suggest", params={"q": "x"}, headers=one), 404)
    problem_of(client.get("/api/v1/corpora/faq/suggest", params={"q": "x", "limit": 0},
                          headers=one), 422)
    problem_of(client.get("/api/v1/history"), 401)


def _corpus_as(client, headers) -> None:
    client.post("/api/v1/corpora", json={"name": "faq"}, headers=headers)
    put = client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS}, headers=headers)
    assert put.json()["added"] == 3


def test_the_cli_records_lists_and_clears_the_local_history(stack, app, capsys,  # noqa: F811
                                                          monkeypatch):
    make, _ = stack
    client, _door = make()
    _corpus(client)
    work(app, stop_when_idle=True)
    monkeypatch.setattr("searchapp.cli.common.open_app", lambda: app)
    assert main(["search", "--corpus", "faq", "--here", "default port"]) == 0
    capsys.readouterr()
    assert main(["history", "--corpus", "faq"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("faq  default port")
    # the open server's API is the same local user
    got = client.get("/api/v1/corpora/faq/suggest", params={"q": "def"}).json()
    assert got[0] == {"text": "default port", "kind": "recent", "count": 0}
    assert main(["history", "--clear"]) == 0
    assert capsys.readouterr().out == "Forgot 1 recent search.\n"
    assert main(["history"]) == 0 and capsys.readouterr().out == "No recent searches.\n"
