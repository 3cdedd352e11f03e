"""Judgements at scale (issue 33, class 3): the API's list pages, an import streams.

- ``GET /api/v1/corpora/{name}/judgements`` answers a page at a time (``limit``
  at most 1,000, ``cursor`` from the previous page's ``next_cursor``), so a
  corpus with a million judgements is never sent, or held, whole.
- ``import_csv`` reads the file a batch at a time, twice (checked, then
  stored), so its memory does not grow with the file: measured here with
  tracemalloc on 60,000 rows (the whole-file import took about 3.5 KB a row).
"""

from __future__ import annotations

import tracemalloc
from itertools import combinations, islice

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient

from searchapp.api.app import ApiDispatch, build_api
from searchapp.config import Settings
from searchapp.judgements import service
from searchapp.store import repo
from searchapp.web.door import Door
from searchapp.web.middleware import DoorMiddleware

DOCS = 400


@pytest.fixture
def corpus(app):
    with app.db.session() as s:
        c = repo.get_or_create_corpus(s, "faq", "all-MiniLM-L6-v2")
        repo.add_documents(s, c, [repo.NewDocument(f"d{i}", f"text {i}") for i in range(DOCS)])
    return "faq"


@pytest.fixture
def client(app):
    door = Door(Settings.from_env({"SEARCHAPP_DATA_DIR": str(app.settings.data_dir)}))
    door.db = app.db
    api = build_api(app=lambda: app, start_worker=lambda *_: None)
    web = Starlette(middleware=[Middleware(DoorMiddleware, door=door),
                                Middleware(ApiDispatch, api=api)])
    return TestClient(web, base_url="http://127.0.0.1")


def pairs_csv(n: int, offset: int = 0) -> bytes:
    """``n`` distinct pair judgements over the corpus' documents."""
    lines = ["a_id,b_id,label"]
    pairs = islice(combinations(range(DOCS), 2), offset, offset + n)
    lines += [f"d{a},d{b},{k % 2}" for k, (a, b) in enumerate(pairs, offset)]
    return ("\n".join(lines) + "\n").encode()


def test_the_api_lists_judgements_a_page_at_a_time(app, corpus, client):
    summary = service.import_csv(app, corpus, pairs_csv(2_500), "pairs.csv")
    assert summary.added == 2_500
    seen, cursor, pages = [], None, 0
    while True:
        params = {"limit": 1_000, **({"cursor": cursor} if cursor else {})}
        page = client.get(f"/api/v1/corpora/{corpus}/judgements", params=params).json()
        pages += 1
        assert len(page["judgements"]) <= 1_000
        seen += [j["id"] for j in page["judgements"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert pages == 3 and len(seen) == len(set(seen)) == 2_500 and seen == sorted(seen)
    first = client.get(f"/api/v1/corpora/{corpus}/judgements").json()
    assert len(first["judgements"]) == 100 and first["next_cursor"] == str(seen[99])
    for bad in ({"limit": 1_001}, {"limit": 0}, {"cursor": "-1"}, {"cursor": "x"}):
        response = client.get(f"/api/v1/corpora/{corpus}/judgements", params=bad)
        assert response.status_code == 422, bad


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(limit=st.integers(1, 50), kind=st.sampled_from([None, "query", "pair"]))
def test_pages_of_any_size_cover_every_judgement_once(app, corpus, limit, kind):
    if not service.counts(app, corpus)["total"]:
        service.import_csv(app, corpus, pairs_csv(120), "pairs.csv")
        service.import_csv(app, corpus, b"query,doc_id,label\n" + b"".join(
            b"q%d,d%d,%d\n" % (i, i, i % 4) for i in range(37)), "queries.csv")
    listed = [j.id for j in service.list_judgements(app, corpus, kind)]
    paged, after = [], 0
    while True:
        page = service.page_judgements(app, corpus, kind, after, limit)
        paged += [j.id for j in page.judgements]
        if page.next_after is None:
            break
        after = page.next_after
    assert paged == listed


def test_an_import_streams_its_file_in_bounded_memory(app, corpus):
    content = pairs_csv(60_000)
    tracemalloc.start()
    try:
        summary = service.import_csv(app, corpus, content, "pairs.csv")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (summary.added, summary.pair) == (60_000, 60_000)
    assert peak < 40 << 20, f"peak {peak >> 20} MiB for 60,000 rows"
    again = service.import_csv(app, corpus, pairs_csv(10, offset=59_990) + b"d1,d0,1\n",
                               "again.csv")  # d0,d1 was 0
    assert (again.added, again.unchanged, again.updated) == (0, 10, 1)
