"""Guide page: the user guide (``docs/``) read in the app, one topic at a time.

``?topic=NAME`` opens a topic (the pages' "Guide: ..." links set it); a name that is not
a page of the guide says so and lists them.
"""

from __future__ import annotations

import streamlit as st

from searchapp.reporting import md_escape
from searchapp.ui.guide import INDEX, blocks, read_topic, to_guide_links, topics

st.title("Guide")
found = topics()
if not found:
    st.info("The guide's pages (the `docs/` folder of the repository) are not beside this "
            "app. Read them in the repository, or run the app from a full clone.")
    st.stop()
names = [t.name for t in found]
titles = {t.name: t.title for t in found}
wanted = st.query_params.get("topic", INDEX)
if wanted not in titles:
    st.error(f"The guide has no page {md_escape(repr(wanted))}; its pages are: "
             f"{md_escape(', '.join(names))}.")
    wanted = INDEX


def _open() -> None:
    st.query_params["topic"] = st.session_state["guide.topic"]


st.session_state.setdefault("guide.topic", wanted)
if st.session_state["guide.topic"] != wanted:  # the address changed (a link was followed)
    st.session_state["guide.topic"] = wanted
st.selectbox("Page", names, key="guide.topic", format_func=titles.get, on_change=_open)
for kind, part in blocks(to_guide_links(read_topic(wanted), set(names))):
    if kind == "image":
        st.image(part)
    else:
        st.markdown(part)
