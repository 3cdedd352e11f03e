"""Saved searches that watch, with real parts: a watched folder (watchdog, the keeper), the
worker running every job it is given, the bundled encoder, SQLite, webhook targets that
are real HTTP servers (and a silent socket) on 127.0.0.1 started by the test, the feed
through the web server's door, the API and the CLI. Every wait is on a condition.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit
from xml.etree import ElementTree as ET

import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient

from searchapp.cli.main import main as cli_main
from searchapp.config import Settings
from searchapp.corpora import documents
from searchapp.corpora import service as corpora
from searchapp.errors import (
    SavedSearchNameTakenError,
    SavedSearchNotFoundError,
    WebhookAddressError,
)
from searchapp.jobs import queue
from searchapp.jobs.worker import work
from searchapp.saved import service as saved
from searchapp.saved import webhook
from searchapp.saved.feed import feed_for_token
from searchapp.watching.folders import add_watch
from searchapp.watching.keeper import Keeper, Tuning
from searchapp.web.door import Door
from searchapp.web.feeds import feed_routes
from searchapp.web.middleware import DoorMiddleware
from tests.test_watched_folders import wait_for

MODEL = "all-MiniLM-L6-v2"
FAST = Tuning(debounce=0.2, longest_wait=1.5, rescan=3600, settle=0.3, retry=1.0, lease=5,
              refresh=0.2)
ATOM = "{http://www.w3.org/2005/Atom}"



@contextlib.contextmanager
def running(*targets):
    """Each ``target(stop)`` in a thread; stopped and joined at the end."""
    stop = threading.Event()
    threads = [threading.Thread(target=t, args=(stop,)) for t in targets]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)


def worker(app):
    """The worker loop, every kind, as ``searchapp worker`` runs it."""
    return lambda stop: work(app, stop=stop, poll_seconds=0.05)


class Hooks:
    """A webhook target on 127.0.0.1: records each POST; with ``redirect`` set, a POST to
    another path than the redirect's is answered 302 there."""

    def __init__(self, redirect: str | None = None):
        self.posts: list[dict] = []
        self.redirect = redirect
        hooks = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hooks.posts.append({"path": self.path, "body": json.loads(body or b"{}")})
                if hooks.redirect and urlsplit(hooks.redirect).path != self.path:
                    self.send_response(302)
                    self.send_header("Location", hooks.redirect)
                else:
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hooks():
    made: list[Hooks] = []

    def make(**kw) -> Hooks:
        made.append(Hooks(**kw))
        return made[-1]

    yield make
    for h in made:
        h.close()


@pytest.fixture
def silent():
    """An address that accepts connections and never answers (a hung target)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/never"
    sock.close()


@pytest.fixture
def encoded(app, bundled_encoder):
    app.install_encoder(MODEL, bundled_encoder)
    return app


def one(app, saved_id: int) -> saved.SavedView:
    return saved.get_saved(app, saved_id)


def test_a_file_added_to_a_watched_folder_reaches_the_new_count_webhook_and_feed(
        encoded, tmp_path, hooks):
    app, target = encoded, hooks()
    root = tmp_path / "notes"
    root.mkdir()
    (root / "cooking.txt").write_text("Slice the onions thinly and fry them in butter.")
    add_watch(app, root, "notes")
    keeper = Keeper(app, FAST, owner="test-keeper")
    with running(keeper.run, worker(app)):
        wait_for(lambda: corpora.corpus_status(app, "notes").embedded >= 1
                 if _exists(app, "notes") else False, "the first scan, embedded")
        view = saved.save(app, "notes", "rockets", "rocket launch", min_score=0.3,
                          webhook_url=target.url)
        assert view.new == 0, "what was there before the save is not news"
        start = time.monotonic()
        (root / "launch.txt").write_text("The rocket launch moved to dawn because of wind.")
        (root / "bread.txt").write_text("Knead the dough for ten minutes, then let it rest.")
        wait_for(lambda: one(app, view.id).new == 1, "one new hit counted", timeout=30)
        wait_for(lambda: target.posts, "the webhook's POST", timeout=30 - (
            time.monotonic() - start))
        token = view.feed.removeprefix("/feeds/saved/").removesuffix(".atom")
        feed = wait_for(lambda: feed_for_token(app, token, "http://127.0.0.1:8501"),
                        "the feed")
        elapsed = time.monotonic() - start
    assert elapsed < 30, f"the news took {elapsed:.1f} s"
    print(f"file written -> counted new, webhook POSTed, in the feed: {elapsed:.2f} s")
    [post] = target.posts
    body = post["body"]
    assert body["saved_search"] == {"id": view.id, "name": "rockets"}
    assert body["corpus"] == "notes"
    [hit] = body["new_hits"]
    assert hit["id"] == "launch.txt" and hit["title"].startswith("The rocket launch")
    assert hit["source"]["path"] == "launch.txt" and hit["score"] > 0
    entries = ET.fromstring(feed).findall(f"{ATOM}entry")
    assert [e.find(f"{ATOM}title").text for e in entries] == [
        "The rocket launch moved to dawn because of wind."]
    assert entries[0].find(f"{ATOM}link").get("href") == \
        "http://127.0.0.1:8501/view/notes/launch.txt"
    assert one(app, view.id).last_outcome["webhook"]["status"] == 200

    results = saved.run(app, view.id, look=True)  # opening it: the new hit first, marked
    assert results.hits[0].id == "launch.txt" and results.is_new(results.hits[0])
    assert [h.id for h in results.hits if results.is_new(h)] == ["launch.txt"]
    assert one(app, view.id).new == 0, "the look moved the watermark"
    again = saved.run(app, view.id)
    assert not again.new_ids


def _exists(app, name: str) -> bool:
    from searchapp.store import repo

    with app.db.session() as s:
        return repo.find_corpus(s, name) is not None


def test_a_redirecting_or_silent_webhook_never_stalls_the_worker(
        encoded, hooks, silent, monkeypatch):
    app = encoded
    monkeypatch.setattr(webhook, "BACKOFF", 0.1)  # the timeout stays the real one (5 s)
    elsewhere = hooks()  # the redirect's target: another host name for the same machine
    bouncer = hooks(redirect=elsewhere.url.replace("127.0.0.1", "localhost") + "-moved")
    corpora.create_corpus(app, "faq", MODEL)
    documents.upsert(app, "faq", [documents.Doc("q0", "How do I bake bread at home?")])
    with running(worker(app)):
        wait_for(lambda: corpora.corpus_status(app, "faq").embedded == 1, "embedded")
        bounced = saved.save(app, "faq", "bounced", "rocket launch", webhook_url=bouncer.url)
        hung = saved.save(app, "faq", "hung", "rocket launch", webhook_url=silent)
        documents.upsert(app, "faq", [documents.Doc("q1", "The rocket launch is at dawn.")])
        check = wait_for(lambda: _finished(app, "saved-check"), "the saved-check job")
        took = (check.finished_at - check.started_at).total_seconds()
        assert took < webhook.TIMEOUT, f"the check waited for a webhook ({took:.1f} s)"
        asked = time.monotonic()  # the next job, while the hung target holds its POST
        documents.upsert(app, "faq", [documents.Doc("q2", "Another launch window opens.")])
        wait_for(lambda: corpora.corpus_status(app, "faq").embedded == 3, "the next job",
                 timeout=webhook.TIMEOUT * webhook.TRIES)
        assert time.monotonic() - asked < webhook.TIMEOUT * webhook.TRIES
        assert "webhook" not in one(app, hung.id).last_outcome, "still trying: off the worker"
        wait_for(lambda: "webhook" in one(app, bounced.id).last_outcome, "bounced outcome")
        wait_for(lambda: "webhook" in one(app, hung.id).last_outcome, "hung outcome",
                 timeout=60)
    bounce = one(app, bounced.id).last_outcome["webhook"]
    assert "another host" in bounce["error"] and bounce["tries"] == 1
    assert bouncer.posts and elsewhere.posts == [], "never followed to another host"
    hang = one(app, hung.id).last_outcome["webhook"]
    assert "did not answer" in hang["error"] and hang["tries"] == webhook.TRIES
    assert one(app, hung.id).new >= 1, "the news is counted whatever the webhook did"


def _finished(app, kind: str):
    done = [j for j in queue.recent(app.db, 100) if j.kind == kind and j.finished]
    return done[0] if done else None


def test_a_webhook_redirect_within_the_same_origin_is_followed_with_its_post(hooks):
    target = hooks()
    target.redirect = target.url.replace("/hook", "/moved")
    assert webhook.deliver(target.url, {"x": 1}) == {"status": 200, "tries": 1}
    assert [(p["path"], p["body"]) for p in target.posts] == [("/hook", {"x": 1}),
                                                              ("/moved", {"x": 1})]
    other_port = hooks()
    target.redirect = other_port.url.replace("/hook", "/x")  # another port: another origin
    outcome = webhook.deliver(target.url, {"x": 2})
    assert "another host" in outcome["error"] and other_port.posts == []


@pytest.mark.parametrize("url", ["ftp://h.example/x", "file:///etc/passwd", "http://",
                                 "javascript:alert(1)", "https://h.example:99999/x",
                                 "http://h.example/a b"])
def test_a_webhook_url_that_is_not_http_is_refused_before_anything_is_stored(app, url):
    corpora.create_corpus(app, "faq", MODEL)
    with pytest.raises(WebhookAddressError, match="http:// or https://"):
        saved.save(app, "faq", "x", "query", webhook_url=url)
    assert saved.list_saved(app, "faq") == []


def test_the_feed_answers_its_token_only_and_escapes_what_documents_hold(app, monkeypatch):
    corpora.create_corpus(app, "faq", MODEL)
    view = saved.save(app, "faq", "news", "anything")
    documents.upsert(app, "faq", [documents.Doc(
        "evil", "<script>alert('x')</script> & <b>bold</b>\x01")])
    from searchapp.store import saved_searches as rows
    from searchapp.store.schema import Document
    with app.db.session() as s:
        doc_id = s.query(Document.id).filter(Document.external_id == "evil").scalar()
        rows.record_hits(s, view.id, [(doc_id, 0.5)])
    token = view.feed.removeprefix("/feeds/saved/").removesuffix(".atom")

    from searchapp.web import shared
    monkeypatch.setattr(shared, "app", lambda: app)
    door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir),
                                   "SEARCHAPP_PASSWORD": "correct horse battery"}))
    door.db = app.db
    web = Starlette(routes=feed_routes(), middleware=[Middleware(DoorMiddleware, door=door)])
    client = TestClient(web, base_url="http://127.0.0.1")
    answer = client.get(view.feed)  # no login: the token is the credential
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("application/atom+xml")
    [entry] = ET.fromstring(answer.content).findall(f"{ATOM}entry")
    assert entry.find(f"{ATOM}title").text == "<script>alert('x')</script> & <b>bold</b>"
    assert b"<script>" not in answer.content
    for wrong in (token[:-1] + ("A" if token[-1] != "A" else "B"), "x" * 43, "short"):
        assert client.get(f"/feeds/saved/{wrong}.atom").status_code == 404
    assert client.get(f"/feeds/saved/{token}.atom/x").status_code in (401, 303, 307)
    assert client.post(view.feed).status_code in (401, 403, 405)

    documents.delete(app, "faq", ["evil"])  # a deleted document leaves the news and feed
    assert ET.fromstring(client.get(view.feed).content).findall(f"{ATOM}entry") == []


def test_deleting_a_corpus_deletes_its_saved_searches(app):
    corpora.create_corpus(app, "faq", MODEL)
    view = saved.save(app, "faq", "news", "anything")
    corpora.delete(app, "faq")
    with pytest.raises(SavedSearchNotFoundError):
        saved.get_saved(app, view.id)


def test_the_api_saves_lists_runs_and_removes(encoded):
    from searchapp.api.app import ApiDispatch, build_api

    app = encoded
    corpora.create_corpus(app, "faq", MODEL)
    documents.upsert(app, "faq", [documents.Doc("q1", "How do I reset my password?")])
    work(app, stop_when_idle=True)
    door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir)}))
    door.db = app.db
    api = build_api(app=lambda: app, start_worker=lambda a: None)
    web = Starlette(middleware=[Middleware(DoorMiddleware, door=door),
                                Middleware(ApiDispatch, api=api)])
    client = TestClient(web, base_url="http://127.0.0.1")
    made = client.post("/api/v1/corpora/faq/saved", json={
        "name": "passwords", "query": "password reset", "k": 5})
    assert made.status_code == 201, made.text
    saved_id = made.json()["id"]
    assert made.json()["new"] == 0 and made.json()["feed"].endswith(".atom")
    taken = client.post("/api/v1/corpora/faq/saved", json={"name": "passwords", "query": "x"})
    assert taken.status_code == 409 and "exists already" in taken.json()["detail"]
    bad = client.post("/api/v1/corpora/faq/saved",
                      json={"name": "b", "query": "x", "webhook_url": "ftp://x/y"})
    assert bad.status_code == 422 and "http:// or https://" in bad.json()["detail"]
    documents.upsert(app, "faq", [documents.Doc("q2", "Resetting a forgotten password")])
    work(app, stop_when_idle=True)  # embed, then the saved-check it queues
    [listed] = client.get("/api/v1/corpora/faq/saved").json()["saved"]
    assert listed["new"] == 1
    ran = client.post(f"/api/v1/saved/{saved_id}/run").json()
    assert ran["hits"][0]["id"] == "q2" and ran["hits"][0]["new"] is True
    assert client.get(f"/api/v1/saved/{saved_id}").json()["new"] == 1, "run: no look"
    looked = client.post(f"/api/v1/saved/{saved_id}/look").json()
    assert looked["saved"]["new"] == 0
    assert client.delete(f"/api/v1/saved/{saved_id}").status_code == 200
    gone = client.get(f"/api/v1/saved/{saved_id}")
    assert gone.status_code == 404 and "saved search" in gone.json()["detail"]


def test_the_cli_adds_lists_and_removes(app, capsys):
    corpora.create_corpus(app, "faq", MODEL)
    assert cli_main(["saved", "add", "--corpus", "faq", "--name", "cards", "lost card -stolen",
                     "-k", "5", "--webhook", "https://hooks.example.org/x", "--json"]) == 0
    made = json.loads(capsys.readouterr().out)
    assert made["query"] == "lost card -stolen" and made["k"] == 5
    assert cli_main(["saved", "list"]) == 0
    out = capsys.readouterr().out
    assert "cards" in out and "NEW" in out
    assert f"feed http://127.0.0.1:8501{made['feed']}" in out
    assert "webhook https://hooks.example.org/x: nothing sent yet" in out
    assert cli_main(["saved", "add", "--corpus", "faq", "--name", "cards", "x"]) == 1
    err = capsys.readouterr().err
    assert "exists already" in err and len(err.strip().splitlines()) == 1
    assert cli_main(["saved", "remove", str(made["id"])]) == 0
    assert cli_main(["saved", "remove", str(made["id"])]) == 1
    assert "No saved search with id" in capsys.readouterr().err


def test_name_taken_is_refused(app):
    corpora.create_corpus(app, "faq", MODEL)
    saved.save(app, "faq", "a", "query")
    with pytest.raises(SavedSearchNameTakenError):
        saved.save(app, "faq", "a", "other")
