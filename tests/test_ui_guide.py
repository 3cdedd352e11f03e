"""The user guide in the app: the Guide page shows a page of ``docs/`` chosen by
``?topic=``, links between the guide's pages stay inside the app, screenshots come from
``docs/`` only, and every page of the app links to the guide's page on it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from searchapp.ui.guide import DOCS, blocks, read_topic, to_guide_links, topics

REPO = Path(__file__).resolve().parents[1]


def test_the_guide_page_opens_the_topic_of_its_address_with_links_kept_inside():
    at = AppTest.from_file(REPO / "app.py", default_timeout=60).run()
    at.switch_page("searchapp/ui/pages/guide.py")
    at.query_params["topic"] = "search"  # a page with links to other pages of the guide
    at.run()
    assert not at.exception and at.title[0].value == "Guide"
    shown = "\n".join(m.value for m in at.markdown)
    assert read_topic("search").splitlines()[0] in shown  # its heading
    assert "](guide?topic=learning)" in shown and "](guide?topic=how-it-works)" in shown
    assert "learning.md#" not in shown, "links between the guide's pages point inside the app"


def test_an_unknown_topic_says_which_pages_there_are():
    at = AppTest.from_file(REPO / "app.py", default_timeout=60).run()
    at.switch_page("searchapp/ui/pages/guide.py")
    at.query_params["topic"] = "../../etc/passwd"
    at.run()
    assert not at.exception
    assert "has no page '../../etc/passwd'" in at.error[0].value
    assert "clusters" in at.error[0].value


@pytest.mark.parametrize("page, topic", [("search", "search"), ("clusters", "clusters"),
                                         ("evaluate", "learning"), ("upload", "upload")])
def test_each_page_links_to_the_guide_on_it(page, topic):
    at = AppTest.from_file(REPO / "app.py", default_timeout=60).run()
    at.switch_page(f"searchapp/ui/pages/{page}.py").run()
    title = {t.name: t.title for t in topics()}[topic]
    assert f"Guide: {title}" in [link.proto.label for link in at.get("page_link")]


def test_only_names_of_the_guide_are_read():
    with pytest.raises(KeyError):
        read_topic("../README")
    assert {t.name for t in topics()} >= {"README", "search", "clusters", "learning"}


def test_screenshots_are_shown_only_from_the_docs_folder(tmp_path):
    (tmp_path / "shot.png").write_bytes(b"png")
    text = "Intro\n![The map](shot.png)\n![Outside](../secret.png)\n```\n![code](shot.png)\n```"
    parts = blocks(text, tmp_path)
    assert parts[0] == ("markdown", "Intro")
    assert parts[1] == ("image", str((tmp_path / "shot.png").resolve()))
    assert "../secret.png" in parts[2][1] and "![code](shot.png)" in parts[2][1]


@given(st.sampled_from(sorted({"search", "api", "cli"})), st.text(
    alphabet=st.characters(blacklist_characters="()[]\n"), max_size=20))
def test_links_to_guide_pages_are_rewritten_and_others_kept(name, words):
    text = f"{words} [a]({name}.md#part) [b](https://example.org/x.md) [c](missing.md)"
    out = to_guide_links(text, {"search", "api", "cli"})
    assert f"[a](guide?topic={name})" in out
    assert "[b](https://example.org/x.md)" in out and "[c](missing.md)" in out


def test_the_docs_folder_is_beside_the_app():
    assert DOCS.is_dir() and (DOCS / "README.md").is_file()
