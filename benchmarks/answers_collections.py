"""Question–answer collections for ``benchmarks/answers.py``, made from two FAQs installed here.

Neither FAQ was written by anyone on this project; both are read as the HTML pages
Debian ships:

- **debian**: the Debian FAQ (``apt-get install debian-faq``), one page per chapter,
  ``/usr/share/doc/debian/FAQ/*.en.html`` (the table of contents, ``index.en.html``,
  included). A question is a numbered section heading (h2–h6, "8.3. How can I tell
  …?") whose title holds a "?" (the FAQ's questions; "8.1.1. dpkg" or "16.1. Authors"
  are not).
- **git**: Git's FAQ (``gitfaq(7)`` in ``git-doc``), ``/usr/share/doc/git-doc/gitfaq.html``.
  A question is a term (``dt``) of the page's definition lists: every one is a
  question of its Q&A sections ("How do I ignore changes to a tracked file?", and
  the few worded as statements, "I asked Git to ignore various files, yet they are
  still tracked").

The gold answer of a question is the text under its heading up to the next heading
(any h1–h6, or for git the next ``dt``), read from the page in document order;
navigation bars, the table of contents and the page footer are not part of it. A
question whose heading is followed at once by another heading has no answer
text and is left out (and counted).

The pages indexed are copies in which the question is no longer said: each question
heading's text is replaced by its number only ("8.3.", its anchor kept) or emptied
where it has none (git), and every link to a question's anchor (the tables of
contents, "see Section 8.3, “How can I tell …”") says the number only ("8.3.",
"Section 8.3"), its title attribute dropped. The page structure is otherwise
untouched. Gold answers are read from the copies, so they hold exactly the indexed
words. The questions are asked as written.

Example:
    >>> c = debian_collection(Path("/tmp/copies"))               # doctest: +SKIP
    >>> c.questions[0].text, c.questions[0].number               # doctest: +SKIP
    ('What is this FAQ?', '1.1.')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

DEBIAN_FAQ = Path("/usr/share/doc/debian/FAQ")
GIT_FAQ = Path("/usr/share/doc/git-doc/gitfaq.html")
HEADINGS = {f"h{n}" for n in range(1, 7)}
# block elements: their text is a line of its own (a word never runs into the next block's)
BLOCKS = {"p", "div", "section", "article", "main", "li", "ul", "ol", "dl", "dt", "dd",
          "blockquote", "figure", "figcaption", "caption", "address", "header", "footer",
          "body", "table", "tr", "td", "th", "hr", "br", "pre", "center", "details", "summary",
          *HEADINGS}
# never part of an answer: navigation, the table of contents, the footer, the head
SKIPPED_CLASSES = {"navheader", "navfooter", "toc"}
SKIPPED_IDS = {"footer", "header"}
SKIPPED_TAGS = {"head", "script", "style", "nav"}
NUMBER = re.compile(r"^\s*((?:\d+\.)+)\s*(.*)$", re.DOTALL)
WORD = re.compile(r"\w+")


@dataclass
class Question:
    """One question: its words as asked, its number ("8.3." or ""), the page (file name,
    which is the document's id once ingested) and the gold answer's text."""

    qid: str
    text: str
    number: str
    page: str
    answer: str = ""


@dataclass
class Collection:
    """The questions of one FAQ and the copies of its pages to index."""

    name: str
    rule: str
    source: str
    package: str
    pages: list[Path] = field(default_factory=list)  # the copies, written
    questions: list[Question] = field(default_factory=list)
    left_out: list[dict] = field(default_factory=list)  # questions without answer text


def words(text: str) -> str:
    """Lower-cased ``\\w+`` tokens joined by single spaces: the form texts are compared in.

    Example:
        >>> words("Use “apt-get install”,  then\\n  reboot.")
        'use apt get install then reboot'
    """
    return " ".join(WORD.findall(text.lower()))


def norm(text: str) -> str:
    return " ".join(text.split())


# ---- reading and writing pages -----------------------------------------------------------------
def _parse(path: Path):
    import lxml.html

    parser = lxml.html.HTMLParser(no_network=True, remove_comments=False)
    return lxml.html.parse(str(path), parser=parser)


def _write(tree, dest: Path) -> None:
    """The page as UTF-8 HTML that says so (lxml drops the original's charset line)."""
    import lxml.html

    head = tree.getroot().find("head")
    for meta in list(head.iter("meta")) if head is not None else []:
        if meta.get("charset") or (meta.get("http-equiv") or "").lower() == "content-type":
            meta.getparent().remove(meta)
    if head is not None:
        head.insert(0, lxml.html.Element("meta", charset="utf-8"))
    text = lxml.html.tostring(tree, doctype=tree.docinfo.doctype or "<!DOCTYPE html>",
                              encoding="unicode", method="html")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(text.encode("utf-8"))


def _replace_text(element, text: str) -> None:
    """``element`` says ``text`` only; its anchors (``a`` with an id) are kept, emptied."""
    anchors = [a for a in element if isinstance(a.tag, str) and a.tag == "a" and a.get("id")]
    for child in list(element):
        element.remove(child)
    element.text = None
    for a in anchors:
        a.text, a.tail = None, None
        for child in list(a):
            a.remove(child)
        element.append(a)
    if anchors:
        anchors[-1].tail = text or None
    else:
        element.text = text or None


def _skipped(element) -> bool:
    if not isinstance(element.tag, str):
        return True
    classes = set((element.get("class") or "").split())
    return element.tag.lower() in SKIPPED_TAGS or bool(classes & SKIPPED_CLASSES) or \
        (element.get("id") or "") in SKIPPED_IDS


def answers_under(root, headings: dict) -> dict:
    """{question id: the text under its heading up to the next heading}; ``headings`` maps
    each heading element that ends an answer (every heading, questions or not) to its
    question id, or None for a heading that is not a question."""
    out: dict = {}
    current: list = [None]  # the question whose answer is being read

    def emit(text: str | None) -> None:
        if text and current[0] is not None:
            out[current[0]].append(text)

    def walk(element) -> None:
        if _skipped(element):
            emit(element.tail)
            return
        tag = element.tag.lower()
        if element in headings:
            current[0] = headings[element]
            if current[0] is not None:
                out[current[0]] = []
            emit(element.tail)
            return
        block = tag in BLOCKS
        if block:
            emit("\n")
        emit(element.text)
        for child in element:
            walk(child)
        if block:
            emit("\n")
        emit(element.tail)

    walk(root)
    return {q: "\n".join(norm(line) for line in "".join(parts).split("\n") if line.strip())
            for q, parts in out.items()}


# ---- the Debian FAQ ------------------------------------------------------------------------------
def debian_collection(dest: Path, folder: Path = DEBIAN_FAQ,
                      pages: list[str] | None = None) -> Collection:
    """The Debian FAQ's question headings, and copies of its pages without them in ``dest``."""
    names = pages or sorted(p.name for p in folder.glob("*.en.html"))
    trees = {name: _parse(folder / name) for name in names}
    questions: dict[str, Question] = {}  # by anchor id
    heads: dict[str, dict] = {}
    for name, tree in trees.items():
        heads[name] = {}
        for h in tree.getroot().iter(*HEADINGS):
            m = NUMBER.match(norm(h.text_content()))
            anchor = next((a.get("id") for a in h.iter("a") if a.get("id")), None)
            if m and "?" in m.group(2) and anchor:
                q = Question(f"debian-{m.group(1).rstrip('.')}", norm(m.group(2)), m.group(1),
                             name)
                questions[anchor] = q
                heads[name][h] = q.qid
            else:
                heads[name][h] = None
    for tree in trees.values():
        _unsay_links(tree, questions)
    numbers = {q.qid: q.number for q in questions.values()}
    for name in trees:
        for h, qid in heads[name].items():
            if qid is not None:
                _replace_text(h, numbers[qid])
    c = Collection("debian", "numbered section headings (h2-h6) of the chapter pages whose "
                   "title holds a '?'; answer: the text under the heading up to the next heading",
                   str(folder), "debian-faq")
    _finish(c, trees, heads, questions.values(), dest)
    return c


def _unsay_links(tree, questions: dict[str, Question]) -> None:
    """Links to a question's anchor name its number only ("8.3.", or "Section 8.3")."""
    for a in tree.getroot().iter("a"):
        href = a.get("href") or ""
        if "#" not in href:
            continue
        q = questions.get(href.rsplit("#", 1)[1])
        if q is None:
            continue
        said = norm(a.text_content())
        _replace_text(a, f"Section {q.number.rstrip('.')}" if said.startswith("Section")
                      else q.number)
        a.attrib.pop("title", None)


# ---- Git's FAQ -----------------------------------------------------------------------------------
def git_collection(dest: Path, page: Path = GIT_FAQ) -> Collection:
    """gitfaq(7)'s questions (its ``dt`` terms), and a copy of the page without them."""
    tree = _parse(page)
    heads, questions = {}, []
    for h in tree.getroot().iter(*HEADINGS, "dt"):
        if h.tag == "dt":
            q = Question(f"git-{len(questions) + 1}", norm(h.text_content()), "", page.name)
            questions.append(q)
            heads[h] = q.qid
        else:
            heads[h] = None
    for h, qid in heads.items():
        if qid is not None:
            _replace_text(h, "")
    c = Collection("git", "every term (dt) of the page's definition lists (each a question of "
                   "its Q&A sections); answer: the text under it up to the next dt or heading",
                   str(page), "git-doc")
    _finish(c, {page.name: tree}, {page.name: heads}, questions, dest)
    return c


# ---- both ----------------------------------------------------------------------------------------
def _finish(c: Collection, trees: dict, heads: dict, questions, dest: Path) -> None:
    """Gold answers read from the copies; the copies written; empty answers left out."""
    gold: dict[str, str] = {}
    for name, tree in trees.items():
        gold.update(answers_under(tree.getroot(), heads[name]))
        out = dest / name
        _write(tree, out)
        c.pages.append(out)
    for q in questions:
        q.answer = gold.get(q.qid, "")
        if words(q.answer):
            c.questions.append(q)
        else:
            c.left_out.append({"qid": q.qid, "question": q.text, "why": "no text under it"})


def collections(dest: Path, quick: bool = False) -> list[Collection]:
    """Both collections, their copies under ``dest/<name>/``; ``quick``: the Debian FAQ's
    first two chapters only."""
    debian_pages = ["basic-defs.en.html", "getting-debian.en.html"] if quick else None
    return [debian_collection(dest / "debian", pages=debian_pages),
            git_collection(dest / "git")]
