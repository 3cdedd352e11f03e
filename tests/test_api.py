"""The JSON API in-process, through the real door: Starlette with ``DoorMiddleware`` and the
API dispatcher as ``serve.py`` stacks them, on a real SQLite App with the bundled encoder.

Keys (open server, first key, read-only, revoked, mistyped), errors as RFC 9457
problems with the CLI's messages, documents upserted/read/deleted by id, the
search hits in the CLI's ``--json`` shape, and a worker asked for when a job is queued.
"""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from searchapp.access import keys
from searchapp.api.app import ApiDispatch, build_api
from searchapp.config import Settings
from searchapp.jobs.worker import work
from searchapp.search.service import hit_json, search
from searchapp.web.door import Door
from searchapp.web.middleware import DoorMiddleware

PROBLEM = "application/problem+json"
DOCS = [{"id": "t1", "text": "How do I reset my password?", "meta": {"product": "account"}},
        {"id": "t2", "text": "Where is my invoice for March?", "meta": {"product": "billing"}},
        {"id": "t3", "text": "The app crashes when I upload a photo.", "meta": {}}]


@pytest.fixture
def stack(app, bundled_encoder):
    """(client factory, door, started workers) around the test's App."""
    app.install_encoder("all-MiniLM-L6-v2", bundled_encoder)
    started: list = []

    def make(env: dict | None = None) -> tuple[TestClient, Door]:
        door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir),
                                       **(env or {})}))
        door.db = app.db
        api = build_api(app=lambda: app, start_worker=started.append)
        page = Route("/", lambda request: PlainTextResponse("the pages"))
        web = Starlette(routes=[page], middleware=[Middleware(DoorMiddleware, door=door),
                                                   Middleware(ApiDispatch, api=api)])
        return TestClient(web, base_url="http://127.0.0.1"), door

    return make, started


def problem_of(response, status: int) -> dict:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == PROBLEM
    body = response.json()
    assert set(body) >= {"type", "title", "status", "detail"} and body["status"] == status
    return body


def test_an_open_server_needs_no_key_until_one_exists_then_every_request_needs_one(stack, app):
    make, _ = stack
    client, _door = make()
    assert client.get("/api/v1/corpora").status_code == 200
    made = keys.create(app.db, "nightly")
    problem_of(client.get("/api/v1/corpora"), 401)
    ok = client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {made.key}"})
    assert ok.status_code == 200
    wrong = client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {made.key}x"})
    assert "not valid" in problem_of(wrong, 401)["detail"]
    keys.revoke(app.db, "nightly")
    revoked = client.get("/api/v1/corpora", headers={"Authorization": f"Bearer {made.key}"})
    problem_of(revoked, 401)
    assert client.get("/api/v1/corpora").status_code == 200  # no key left: open again


def test_a_key_presented_to_an_open_server_is_still_checked(stack):
    make, _ = stack
    client, _door = make()
    problem_of(client.get("/api/v1/corpora", headers={"Authorization": "Bearer sa_guess"}), 401)


def test_a_read_only_key_reads_and_searches_but_changes_nothing(stack, app):
    make, _ = stack
    client, _door = make()
    writer = {"Authorization": f"Bearer {keys.create(app.db, 'w').key}"}
    reader = {"Authorization": f"Bearer {keys.create(app.db, 'r', read_only=True).key}"}
    assert client.post("/api/v1/corpora", json={"name": "faq"}, headers=writer).status_code \
        == 201
    refused = client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS[:1]},
                         headers=reader)
    assert "read-only" in problem_of(refused, 403)["detail"]
    problem_of(client.delete("/api/v1/corpora/faq", headers=reader), 403)
    problem_of(client.post("/api/v1/snapshots", headers=reader), 403)
    assert client.get("/api/v1/corpora/faq", headers=reader).json()["documents"] == 0


def test_with_a_password_a_key_opens_the_api_and_not_the_pages(stack, app):
    make, _ = stack
    client, _door = make({"SEARCHAPP_PASSWORD": "pw"})
    bearer = {"Authorization": f"Bearer {keys.create(app.db, 'k').key}"}
    assert client.get("/api/v1/corpora", headers=bearer).status_code == 200
    assert client.get("/", headers=bearer).status_code == 401
    problem_of(client.get("/api/v1/corpora"), 401)


def test_errors_are_problems_with_the_clis_messages(stack, app):
    make, _ = stack
    client, _door = make()
    missing = problem_of(client.get("/api/v1/corpora/nope"), 404)
    assert missing["detail"] == "No corpus named 'nope'. Existing corpora: (none yet)."
    assert missing["type"] == "urn:searchapp:problem:not-found"
    bad = problem_of(client.post("/api/v1/corpora/nope/search", json={"query": "", "k": 0}),
                     422)
    assert {e["field"] for e in bad["errors"]} == {"query", "k"}
    problem_of(client.post("/api/v1/corpora", json={"name": "../etc"}), 422)
    client.post("/api/v1/corpora", json={"name": "faq"})
    assert "exists already" in problem_of(client.post("/api/v1/corpora",
                                                      json={"name": "faq"}), 409)["detail"]
    problem_of(client.get("/api/v1/jobs/99"), 404)
    problem_of(client.delete("/api/v1/models"), 405)
    problem_of(client.get("/api/v1/no/such/thing"), 404)
    problem_of(client.get("/api/v1/corpora/a%0Ab"), 404)  # a newline in the path
    problem_of(client.put("/api/v1/corpora/faq/documents", content=b"{not json",
                          headers={"content-type": "application/json"}), 422)
    nested = client.put("/api/v1/corpora/faq/documents", json={"documents": [
        {"id": "x", "text": "y", "meta": {"a": {"b": 1}}}]})
    problem_of(nested, 422)
    surrogate = b'{"documents": [{"id": "x", "text": "bad \\ud800 text"}]}'
    problem_of(client.put("/api/v1/corpora/faq/documents", content=surrogate,
                          headers={"content-type": "application/json"}), 422)
    search_faq = client.post("/api/v1/corpora/faq/search", json={"query": "password"})
    assert "no embedded documents" in problem_of(search_faq, 409)["detail"]


def test_documents_by_id_round_trip_and_search_gives_the_clis_json(stack, app):
    make, started = stack
    client, _door = make()
    client.post("/api/v1/corpora", json={"name": "faq"})
    first = client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS}).json()
    assert first["added"] == 3 and first["job_id"] is not None
    assert started == [app]  # a worker is asked for when a job is queued
    again = client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS}).json()
    assert (again["unchanged"], again["job_id"], again["generation"]) == \
        (3, None, first["generation"])
    work(app, stop_when_idle=True)
    got = client.get("/api/v1/corpora/faq/documents/t2").json()
    assert got == {**DOCS[1], "meta": {**DOCS[1]["meta"], "lang": "en"},  # told from its text
                   "embedded": True, "source": "the API"}
    body = {"query": "invoice", "k": 2, "mode": "hybrid", "where": ["product=billing"]}
    answer = client.post("/api/v1/corpora/faq/search", json=body)
    hits = answer.json()
    stages = [part.split(";")[0] for part in answer.headers["server-timing"].split(", ")]
    assert {"fulltext", "vector", "fusion", "rows", "snippets", "total"} <= set(stages)
    assert {"encode", "query-cache"} & set(stages)  # the query vector: computed or cached
    expected = [hit_json(h) for h in search(app, "faq", "invoice", k=2, mode="hybrid",
                                            where=["product=billing"])]
    assert hits == {"mode": "hybrid", "rerank": False, "did_you_mean": None,
                    "results": expected, "answers": [], "missing": [],
                    "answer": {"asked": False, "silent": False, "threshold": 0.5,
                               "threshold_source": "default"},
                    "understood": {"text": "invoice", "phrases": [], "excluded": [],
                                   "any_of": [], "filters": [], "notices": []}}
    assert expected[0]["id"] == "t2"
    typed = client.post("/api/v1/corpora/faq/search", json={
        "query": 'product:billing "for march" -reset color:red'}).json()
    assert [h["id"] for h in typed["results"]] == ["t2"]
    assert typed["understood"]["filters"] == ["product:billing"]
    assert (typed["understood"]["phrases"], typed["understood"]["excluded"]) == \
        (["for march"], ["reset"])
    assert "color: is not a field here" in typed["understood"]["notices"][0]
    many = client.post("/api/v1/corpora/faq/documents/get", json={"ids": ["t1", "zz"]}).json()
    assert [d["id"] for d in many["documents"]] == ["t1"] and many["missing"] == ["zz"]
    gone = client.delete("/api/v1/corpora/faq/documents/t2").json()
    assert gone["deleted"] == 1 and gone["generation"] > first["generation"]
    problem_of(client.get("/api/v1/corpora/faq/documents/t2"), 404)
    problem_of(client.delete("/api/v1/corpora/faq/documents/t2"), 404)
    after = client.post("/api/v1/corpora/faq/search", json={**body, "where": []}).json()
    assert "t2" not in [h["id"] for h in after["results"]]
    status = client.get("/api/v1/corpora/faq").json()
    assert (status["documents"], status["embedded"], status["ready"]) == (2, 2, True)


def test_duplicates_check_jobs_models_and_snapshots(stack, app):
    make, _ = stack
    client, _door = make()
    client.post("/api/v1/corpora", json={"name": "faq"})
    client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS})
    work(app, stop_when_idle=True)
    matches = client.post("/api/v1/corpora/faq/duplicates/check",
                          json={"text": "how do I reset my password", "threshold": 0.8}).json()
    assert [m["id"] for m in matches["matches"]] == ["t1"]
    job = client.post("/api/v1/snapshots")
    assert job.status_code == 202 and job.json()["kind"] == "backup"
    assert job.json()["created_at"].endswith("Z")  # RFC 3339, with its offset
    work(app, stop_when_idle=True)
    snapshot = client.get(f"/api/v1/jobs/{job.json()['id']}").json()["result"]["snapshot"]
    listed = client.get("/api/v1/snapshots").json()["snapshots"]
    assert [s["name"] for s in listed] == [snapshot]
    assert listed[0]["corpora"][0]["name"] == "faq"
    download = client.get(f"/api/v1/snapshots/{snapshot}")
    assert download.headers["content-type"] == "application/x-tar"
    assert download.content == (app.settings.backup_dir / snapshot).read_bytes()
    problem_of(client.get("/api/v1/snapshots/..%2Fsearchapp.db"), 404)
    assert "all-MiniLM-L6-v2" in [m["name"] for m in client.get("/api/v1/models").json()[
        "models"]]
    cancel = client.post(f"/api/v1/jobs/{job.json()['id']}/cancel")
    assert "already succeeded" in problem_of(cancel, 409)["detail"]


def test_listen_on_refuses_every_interface_without_a_password_or_a_key(app):
    door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir)}))
    door.db = app.db
    assert door.listen_on("127.0.0.1") is None and not door.enabled
    assert "Refusing to listen on 0.0.0.0" in door.listen_on("0.0.0.0")
    assert "every interface" in door.listen_on(None)
    keys.create(app.db, "k")
    assert door.listen_on("0.0.0.0") is None and door.enabled  # pages closed, API by key
    with_password = Door(Settings.from_env({"SEARCHAPP_PASSWORD": "pw"}))
    assert with_password.listen_on("192.168.1.5") is None


def test_an_unexpected_error_is_a_500_problem_with_a_reference_and_no_traceback(
        stack, app, monkeypatch):
    make, _ = stack
    client, _door = make()

    def broken(*_args, **_kwargs):
        raise RuntimeError("secret internals /srv/data")

    monkeypatch.setattr("searchapp.corpora.service.corpus_status", broken)
    client.post("/api/v1/corpora", json={"name": "faq"})
    body = problem_of(client.get("/api/v1/corpora/faq"), 500)
    assert "reference" in body["detail"] and "secret" not in body["detail"]
    assert "Traceback" not in body["detail"]


def test_another_app_sends_judgements_that_count_like_the_pages_and_can_take_them_back(
        stack, app):
    from searchapp.judgements import service as judgements

    make, _ = stack
    client, _door = make()
    client.post("/api/v1/corpora", json={"name": "faq"})
    client.put("/api/v1/corpora/faq/documents", json={"documents": DOCS})
    made = client.post("/api/v1/corpora/faq/judgements",
                       json={"query": "reset  password", "doc": "t1", "label": 2})
    assert made.status_code == 201, made.text
    pair = client.post("/api/v1/corpora/faq/judgements",
                       json={"a": "t2", "b": "t1", "label": 0}).json()
    assert (pair["kind"], pair["a"], pair["b"], pair["source"]) == ("pair", "t1", "t2", "api")
    counted = judgements.counts(app, "faq")
    assert (counted["query"], counted["pair"], counted["total"]) == (1, 1, 2)
    listed = client.get("/api/v1/corpora/faq/judgements", params={"kind": "query"}).json()
    assert [(j["query"], j["a"], j["label"]) for j in listed["judgements"]] == [
        ("reset password", "t1", 2)]
    assert "No document 'zz'" in problem_of(client.post(
        "/api/v1/corpora/faq/judgements", json={"a": "t1", "b": "zz", "label": 1}), 422)["detail"]
    problem_of(client.post("/api/v1/corpora/faq/judgements",
                           json={"query": "x", "doc": "t1", "a": "t2", "label": 1}), 422)
    problem_of(client.post("/api/v1/corpora/faq/judgements",
                           json={"a": "t1", "b": "t2", "label": 4}), 422)
    taken = client.delete(f"/api/v1/corpora/faq/judgements/{pair['id']}").json()
    assert taken["id"] == pair["id"] and len(judgements.list_judgements(app, "faq")) == 1
    problem_of(client.delete(f"/api/v1/corpora/faq/judgements/{pair['id']}"), 404)
    problem_of(client.post("/api/v1/corpora/nope/judgements",
                           json={"a": "t1", "b": "t2", "label": 1}), 404)


def test_the_openapi_document_says_which_score_is_the_cosine():
    from searchapp.api.app import build_api

    hit = build_api().openapi()["components"]["schemas"]["Hit"]
    assert "fusion score (not a cosine" in hit["properties"]["score"]["description"]
    assert "cosine" in hit["properties"]["semantic"]["description"]
