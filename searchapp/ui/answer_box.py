"""The answer box above a search's hits: the sentences of the corpus' documents that answer
the query, each in its context, where it stands, a link there, and right / wrong marks.

What it draws comes from ``searchapp.answers.service.search_with_answers`` (an
``AnswerResult``): nothing when no answer was sought (a query that does not read as a
question, with "Always answer" off); the silence line (``service.SILENCE``) when one was
sought and no sentence scored at the threshold; else each answer (1 to 3) as one line, the
sentence highlighted between the sentences before and after it (dimmed), then a row: its
file, page and section (or its document's id), its score, "Open at page N" (or "Open at
<section>"), the app's reader view opened at the sentence with it marked (a PDF also opens
at its page in the browser's viewer), and a right / wrong switch whose marks are answer
judgements (``searchapp.ui.judging``) that calibrate the corpus' threshold. The sentences
are the documents' own words, escaped (``md_escape``): never generated, never markup.

Example (inside the Search page, above the hits):
    >>> hits, result = search_with_answers(app, "faq", "how do I reset it?")  # doctest: +SKIP
    >>> answer_box(app, "faq", "how do I reset it?", result)                  # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.answers.finder import Answer
from searchapp.answers.service import SILENCE, AnswerResult
from searchapp.context import App
from searchapp.reporting import md_escape
from searchapp.ui.judging import judgement_marks
from searchapp.ui.results import open_label, page_word, where_in_file

BOX_KEY = "answer-box"  # the box's container (tests and scripts find it by this key)
SCORE_HELP = ("The answer's score: 0.7 × the sentence's cosine to the query + 0.3 × its "
              "passage's. Answers are shown at or above the corpus' answer threshold.")
ABOUT = ("Sentences of your documents, as written (never generated). Mark each right or "
         "wrong: the marks calibrate when an answer is clear enough to show.")


def answer_box(app: App, corpus: str, query: str, result: AnswerResult) -> None:
    """The box (see the module's docstring); nothing when no answer was sought."""
    if not result.asked:
        return
    threshold = f"{result.threshold:.2f} ({md_escape(result.threshold_source)})"
    with st.container(border=True, key=BOX_KEY, gap="small"):
        if result.silent:
            st.info(SILENCE, icon=":material/search_off:")
            st.caption(f"No sentence of the first results' passages scores the answer "
                       f"threshold, {threshold}, or more.")
            return
        for n, answer in enumerate(result.answers, start=1):
            _answer(app, corpus, query, answer, n)
        st.caption(f"{ABOUT} Threshold {threshold}.")


def _answer(app: App, corpus: str, query: str, answer: Answer, n: int) -> None:
    """One answer: its sentence in context, then where it stands, its links and marks."""
    with st.container(key=f"answer-{n}", gap="xxsmall"):
        st.markdown(answer_markdown(answer))
        with st.container(horizontal=True, gap="small", vertical_alignment="center",
                          key=f"answer-actions-{n}"):
            st.caption(md_escape(answer_place(answer)))
            st.badge(f"{answer.score:.2f}", color="green", help=SCORE_HELP)
            if answer.view and answer.source:
                st.link_button(md_escape(open_answer_label(answer.source)), answer.view,
                               type="tertiary", icon=":material/menu_book:",
                               help="The document's text in a new tab, at this sentence, "
                                    "marked")
            if answer.source and answer.source.get("type") == "pdf" and \
                    answer.source.get("page"):
                _pdf_link(corpus, answer)
            judgement_marks(app, corpus, query=query, doc=answer.doc_id, answer=answer.text,
                            key=f"answer-{n}")


def _pdf_link(corpus: str, answer: Answer) -> None:
    """The original PDF opened at the answer's page, in the browser's own viewer."""
    from searchapp.web.originals import original_link

    page = int(answer.source["page"])
    st.link_button(f"PDF at page {page:d}", original_link(corpus, answer.doc_id, answer.source),
                   type="tertiary", icon=":material/open_in_new:",
                   help="The original file, at this page")


def answer_markdown(answer: Answer) -> str:
    """The sentence highlighted, the sentences before and after it dimmed, each escaped and
    on one line (a PDF's line breaks are layout).

    Example:
        >>> print(answer_markdown(Answer("Run *git revert*.", "faq.html", 9, 26, 0.7, 0.7, 1,
        ...                              before="It was pushed.", after="")))
        :gray[It was pushed.] :orange-background[Run \\*git revert\\*.]
    """
    parts = [f":gray[{md_escape(_flat(answer.before))}]" if _flat(answer.before) else "",
             f":orange-background[{md_escape(_flat(answer.text))}]",
             f":gray[{md_escape(_flat(answer.after))}]" if _flat(answer.after) else ""]
    return " ".join(p for p in parts if p)


def answer_place(answer: Answer) -> str:
    """Where the answer stands, as text: its file, page and section, or its document's id.

    Example:
        >>> answer_place(Answer("x", "row-7", 0, 1, 0.6, 0.6, 1))
        'id row-7'
        >>> answer_place(Answer("x", "a/b.pdf", 0, 1, 0.6, 0.6, 1, source={
        ...     "path": "a/b.pdf", "type": "pdf", "page": 3, "section": None}))
        'b.pdf · page 3'
    """
    return where_in_file(answer.source) if answer.source else f"id {answer.doc_id}"


def open_answer_label(source: dict) -> str:
    """The reader view's button: "Open at page N" (slide N) where the answer has a page,
    else "Open at" its section (``results.open_label``). As text: the caller escapes it.

    Example:
        >>> open_answer_label({"type": "pdf", "page": 4, "section": "Setup"})
        'Open at page 4'
        >>> open_answer_label({"type": "html", "page": None, "section": "FAQ > Undo"})
        'Open at Undo'
    """
    if source.get("page") is not None:
        return f"Open at {page_word(source)} {source['page']}"
    return open_label(source)


def _flat(text: str) -> str:
    """``text`` on one line: whitespace runs made one space."""
    return " ".join(str(text).split())
