"""The Search page's suggestions under the box, its "Recent searches" and their recording.

Streamlit's ``text_input`` offers no completion, so a small script does it in the
browser (``static/suggestions.js``): ``attach(corpus)`` injects it into the page once,
through a zero-height component whose same-origin frame reaches
``window.parent.document``, and names the corpus it completes for. The script asks
``GET /api/v1/corpora/{name}/suggest?q=`` of this same server as one types (the login
cookie opens the API), so the page, the API and the CLI offer the same suggestions
(``search/suggest.py``). The history is the page user's: the login of a
password-protected server (``browser``), else the local user (``search/history.py``).

Example:
    >>> attach("faq")                                              # doctest: +SKIP
    >>> recent_searches(app, "faq")                                # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st
import streamlit.components.v1 as components

from searchapp.context import App
from searchapp.search import history
from searchapp.ui.common import user_errors

SCRIPT = Path(__file__).resolve().parent / "static" / "suggestions.js"
SHOWN = 10  # recent searches listed in the expander


def attach(corpus: str) -> None:
    """Suggestions under the query box, for ``corpus`` (one call, after the box is drawn)."""
    code = json.dumps(SCRIPT.read_text(encoding="utf-8"))
    components.html(f"""<script>
(function () {{
  var parent = window.parent;
  parent.__searchappSuggestCorpus = {json.dumps(corpus)};
  if (parent.__searchappSuggest) return;
  var script = parent.document.createElement("script");
  script.textContent = {code};
  parent.document.head.appendChild(script);
}})();
</script>""", height=0)


def page_user(app: App) -> str:
    """Whose history the pages keep: the login of a password-protected server, else local."""
    return history.page_user(app.settings.password_required)


def record_search(app: App, corpus: str, query: str) -> None:
    """Keep a search run from the page in its user's history."""
    history.remember(app, corpus, page_user(app), query)


def recent_searches(app: App, corpus: str) -> None:
    """A small "Recent searches" expander: the user's last searches of ``corpus`` and
    "Clear history"."""
    found = []
    with user_errors():
        found = history.past_searches(app, page_user(app), corpus, limit=SHOWN)
    with st.expander(f"Recent searches ({len(found)})" if found else "Recent searches",
                     icon=":material/history:"):
        if not found:
            st.caption("Searches you run here are listed here and offered as you type.")
            return
        st.text("\n".join(" ".join(p.query.split()) for p in found))  # as typed, never markup
        if st.button("Clear history", key="search-history-clear", type="tertiary",
                     icon=":material/delete:"):
            history.clear_history(app, page_user(app), corpus)
            st.rerun(scope="fragment")
