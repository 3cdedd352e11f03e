"""Which corpus an upload goes to: by default the corpus in use, so a second upload joins
the pile instead of starting a corpus beside it.

The corpus in use is the one this session chose last on any page, or, in a new session
(a reload, another tab), the one the data folder used last (``common.remembered_corpus``).
A new corpus is one click away; its name defaults to the file's.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from searchapp.ui.common import md_escape, remembered_corpus

NEW, EXISTING = "A new corpus", "An existing corpus"


def upload_target(filename: str, names: list[str], key: str, what: str) -> str | None:
    """The corpus chosen for an upload of ``what`` ("documents", "rows"); None while the
    choice cannot be used (a new name that is taken).

    Example:
        >>> corpus = upload_target("faq.csv", ["faq", "manuals"], "u1", "rows")  # doctest: +SKIP
    """
    if names:
        mode = st.radio(f"Add the {md_escape(what)} to", [NEW, EXISTING], index=1, horizontal=True,
                        key=f"mode-{key}", help="The corpus in use is offered first; a new "
                        "corpus is searched apart from the others.")
        if mode == EXISTING:
            current = remembered_corpus(names)
            return st.selectbox("Corpus", names, key=f"existing-{key}",
                                index=names.index(current) if current in names else 0)
    stem = Path(filename).name.split(".")[0] or "corpus"
    name = st.text_input("New corpus name", value=stem, key=f"name-{key}", max_chars=200)
    if name.strip() in names:
        st.warning(f"A corpus named {md_escape(repr(name.strip()))} already exists. Choose "
                   f"'{EXISTING}' to add these {md_escape(what)} to it, or pick another name.",
                   icon=":material/warning:")
        return None
    return name
