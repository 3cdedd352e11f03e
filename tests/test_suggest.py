"""Suggestions as you type: the completions of a corpus, kept current, and the history."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from searchapp.errors import CorpusNotFoundError, InvalidParameterError
from searchapp.search import history
from searchapp.search.suggest import suggest
from searchapp.store import repo
from searchapp.store.documents import NewDocument
from searchapp.store.search_history import fold

DOCS = [
    NewDocument("guide/Install.md", "Install\nHow to change the port of the server.",
                {"path": "guide/Install.md"},
                layout=[[0, 7, None, "Install"], [8, 40, None, "Install > Default port"]]),
    NewDocument("guide/ports.md", "The default port is 8080.",
                {"title": "Changing the default port"},
                layout=[[0, 25, None, "Changing the default port > Firewall"]]),
    NewDocument("notes/Crème brûlée.txt", "Recipe", {}, layout=[[0, 6, None, None]]),
    NewDocument("r1", "Reset your password from the login page", {}),
    NewDocument("r2", "Reset your password by mail", {}),
]


def _corpus(app, docs=DOCS, name="faq"):
    with app.db.session() as s:
        corpus = repo.get_or_create_corpus(s, name, "all-MiniLM-L6-v2")
        repo.add_documents(s, corpus, list(docs))


def _texts(app, prefix, **kw):
    return [(x.text, x.kind) for x in suggest(app, "faq", prefix, **kw)]


def test_titles_headings_phrases_by_word_start_case_and_accents(app):
    _corpus(app)
    found = _texts(app, "CHANG")
    assert ("Changing the default port", "title") in found
    assert ("Install", "title") in _texts(app, "inst")  # a file's name without its extension
    assert ("Firewall", "heading") in _texts(app, "fire")
    assert ("Crème brûlée", "title") in _texts(app, "creme b")  # accents folded
    assert ("Default port", "heading") in _texts(app, "port")  # a later word of a phrase
    assert ("Reset your password", "phrase") in _texts(app, "reset y")  # first lines of rows
    assert _texts(app, "zzz") == []


def test_the_last_word_is_completed_while_the_earlier_stay(app):
    _corpus(app)
    assert ("how to default port", "phrase") not in _texts(app, "how to po")
    assert ("how to port", "phrase") in _texts(app, "how to po")


def test_recent_searches_first_and_never_shared(app):
    _corpus(app)
    history.remember(app, "faq", "local", "default port 8080 firewall")
    history.remember(app, "faq", "key:1", "default route")
    assert _texts(app, "def", user="local")[0] == ("default port 8080 firewall", "recent")
    assert ("default route", "recent") not in _texts(app, "def", user="local")
    assert _texts(app, "def", user="key:1")[0] == ("default route", "recent")
    assert _texts(app, "def", user="key:2")[0][1] != "recent"
    assert _texts(app, "", user="local") == [("default port 8080 firewall", "recent")]
    assert history.clear_history(app, "local") == 1
    assert _texts(app, "", user="local") == []
    assert [p.query for p in history.past_searches(app, "key:1")] == ["default route"]


def test_kept_current_as_documents_come_and_go(app):
    _corpus(app)
    assert _texts(app, "kubern") == []
    with app.db.session() as s:
        corpus = repo.get_corpus(s, "faq")
        repo.add_documents(s, corpus, [NewDocument("k1", "Kubernetes ingress", {}),
                                       NewDocument("k2", "Kubernetes ingress rules", {})])
    assert ("Kubernetes ingress", "phrase") in _texts(app, "kubern")
    with app.db.session() as s:
        repo.delete_by_external_id(s, repo.get_corpus(s, "faq"), ["k1"])
    assert _texts(app, "kubern") == []  # one document left: no longer a frequent phrase
    with app.db.session() as s:
        repo.delete_by_external_id(s, repo.get_corpus(s, "faq"), ["guide/ports.md"])
    assert ("Changing the default port", "title") not in _texts(app, "chang")


def test_weights_are_document_frequencies(app):
    _corpus(app)
    found = {x.text: x.count for x in suggest(app, "faq", "reset")}
    assert found["Reset your password"] == 2


def test_bad_input_is_one_clear_error(app):
    _corpus(app)
    with pytest.raises(CorpusNotFoundError):
        suggest(app, "nope", "x")
    with pytest.raises(InvalidParameterError, match="limit"):
        suggest(app, "faq", "x", limit=0)
    assert suggest(app, "faq", "x" * 500) == []


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prefix=st.text(max_size=30))
def test_any_prefix_answers_and_each_suggestion_matches_it(app, prefix):
    _corpus(app)
    for found in suggest(app, "faq", prefix, user="local"):
        words = fold(found.text).split()
        typed = fold(prefix).split()
        if typed:  # the last typed word starts one of the suggestion's words
            assert any(w.startswith(typed[-1]) for w in words) or found.kind == "recent"


def test_a_large_build_runs_beside_the_keystrokes_never_in_their_way(app, monkeypatch):
    """Over SYNC_DOCUMENTS documents to read (a first build at 1M takes minutes), a keystroke
    gets the user's recent searches at once and the completions once the thread has built
    them."""
    import threading

    from searchapp.search import suggest as suggesting

    monkeypatch.setattr(suggesting, "SYNC_DOCUMENTS", 2)
    _corpus(app)
    history.remember(app, "faq", "local", "change the port")
    assert _texts(app, "chang", user="local") == [("change the port", "recent")]
    for builder in [t for t in threading.enumerate() if t.name.startswith("completions-")]:
        builder.join(timeout=60)  # (it may have finished already)
    assert ("Changing the default port", "title") in _texts(app, "chang", user="local")
