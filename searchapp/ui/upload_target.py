"""Which corpus an upload goes to: by default the corpus in use, so a second upload joins
the pile instead of starting a corpus beside it.

The corpus in use is the one this session chose last on any page, or, in a new session
(a reload, another tab), the one the data folder used last (``common.remembered_corpus``).
A new corpus is one click away; its name defaults to the file's, and its model is chosen
with it (``new_corpus_model``: the server's default, the bundled English model unless
SEARCHAPP_MODEL says otherwise, or ``use-multilingual-v3`` for documents in other languages,
or a fine-tuned one); an existing corpus keeps its own. The choice goes to the same service
call as ``ingest --model`` and the API's ``POST /corpora`` (``corpora.service.model_for``).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from searchapp.context import App
from searchapp.embedding.model_languages import label
from searchapp.embedding.models import list_models
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


def new_corpus_model(app: App, corpus: str | None, names: list[str], key: str) -> str | None:
    """The model chosen for a new corpus (None for an existing one: it keeps its model).

    Offers every usable model, labelled with what it reads, the server's default chosen.

    Example:
        >>> model = new_corpus_model(app, "handbuch", ["faq"], "u1")  # doctest: +SKIP
    """
    if not corpus or corpus.strip() in names:
        return None
    default = app.settings.model
    models = [m.name for m in list_models(app.settings) if not m.problem]
    if default not in models:
        models.insert(0, default)
    return st.selectbox("Model of the new corpus", models, index=models.index(default),
                        key=f"model-{key}", format_func=lambda name: label(name, default),
                        help="How its documents are found by meaning. The multilingual model "
                        "reads 16 languages and finds a document from a query in another "
                        "language; the English model is the default. The Models page "
                        "switches a corpus to another model later.")
