"""A second manual for ``retrieval_documents.py``: PostgreSQL's HTML pages, a section's
heading as the question, the page that holds the section as the answer.

Debian's ``postgresql-doc-15`` (``/usr/share/doc/postgresql-doc-15/html``), written by
the PostgreSQL project. Every page (file) is one document, as the app ingests it.
Questions are the headings of ``div.sect2`` sections (the number removed), kept
when the heading is unique in the whole manual and has at least two words of
letters (``ir_sections.usable_query``). The page a question comes from is written
again **without** that heading and without any table of contents, so the
question's exact words are not where the answer is; the text under it stays.

The pages are chosen by a rule blind to any result, sized to embed in minutes:
the pages holding a question whose name's SHA-256 falls in the first
``ANSWER_SHARE`` of the hash range (at most ``PER_PAGE`` questions each, also by
hash), and as distractors the other pages whose hash falls in the first
``DISTRACTOR_SHARE`` (the index, the release notes and reference pages come in
when the hash picks them, like any other page).

Example:
    >>> folder, names, questions = build(Path("/tmp/pg"))   # doctest: +SKIP
    >>> len(names), len(questions)                          # doctest: +SKIP
    (108, 170)
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

from ir_sections import NUMBER, usable_query

MANUAL = Path("/usr/share/doc/postgresql-doc-15/html")
ANSWER_SHARE = 0.3  # pages with questions
DISTRACTOR_SHARE = 0.06  # pages without (of the rest)
PER_PAGE = 3  # questions per page at most


def _share(key: str) -> float:
    digest = hashlib.sha256(f"pg-pages:{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _headings(tree) -> list[tuple[object, str]]:
    """(the sect2's titlepage element, its heading without the number) in page order."""
    found = []
    for div in tree.xpath('//div[@class="sect2"]'):
        title = div.xpath('./div[@class="titlepage"]')
        head = title[0].xpath('.//h3') if title else []
        if head:
            text = NUMBER.sub("", " ".join(head[0].text_content().split())).strip()
            found.append((title[0], text))
    return found


def build(out: Path, manual: Path = MANUAL) -> tuple[Path, list[str], list[tuple[str, set]]]:
    """Write the chosen pages (headings of questions and tables of contents removed) under
    ``out``; return (folder, file names, [(question, {its page})])."""
    from lxml import html

    trees = {p.name: html.parse(str(p)) for p in sorted(manual.glob("*.html"))}
    heads = {name: _headings(tree) for name, tree in trees.items()}
    counts = Counter(h.lower() for found in heads.values() for _, h in found)
    usable = {name: [(el, h) for el, h in found if counts[h.lower()] == 1 and usable_query(h)]
              for name, found in heads.items()}
    answer = [n for n in trees if usable[n] and _share(n) < ANSWER_SHARE]
    others = [n for n in trees if n not in answer and _share(n) < DISTRACTOR_SHARE]
    out.mkdir(parents=True, exist_ok=True)
    questions = []
    for name in answer + others:
        tree = trees[name]
        asked = sorted(usable[name], key=lambda x: _share(x[1]))[:PER_PAGE] \
            if name in answer else []
        for el, heading in asked:
            el.getparent().remove(el)
            questions.append((heading, {name}))
        for toc in tree.xpath('//div[@class="toc"]'):
            toc.getparent().remove(toc)
        tree.write(str(out / name), method="html", encoding="utf-8")
    return out, sorted(answer + others), questions


if __name__ == "__main__":
    import sys
    import tempfile

    folder, names, qs = build(Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()))
    chars = sum(len(re.sub(r"<[^>]+>", "", (folder / n).read_text())) for n in names)
    print(f"{folder}: {len(names)} pages, {len(qs)} questions, ~{chars:,} characters")
