"""The passages of the sentence gold set, chosen by a fixed rule before any splitter ran.

The gold set (``benchmarks/data/sentence_gold.txt``) is cut by hand; which passages it holds
is decided here, mechanically, so that nobody picks passages a splitter happens to get right:

- sources, as the app stores them: Git's manual pages (``/usr/share/doc/git-doc/*.txt``, read
  as plain text), the Debian FAQ (``debian-faq.en.txt.gz``, from its body: the first line
  starting "1.1."), PostgreSQL's HTML manual (``postgresql-doc-15/html``, through the app's
  own HTML reader, ``read_html_bytes``, so the text has the reader's line breaks);
- hard-case classes (``CLASSES``): abbreviations, version numbers, file names, URLs, sizes,
  ellipses, prompt lines, list items, table rows, headings;
- for each class and source: the files in the order of the SHA-1 of their names (the held-out
  set: of "held-out" + their names, ``--salt held-out``, the first set's passages skipped);
  the first
  line of the first file that matches the class, skipping a match whose excerpt would overlap
  an excerpt already taken; the excerpt is that line with the 3 lines before it and the 8
  after it (12 lines, clipped to the text).

Run:  .venv/bin/python benchmarks/sentence_gold_pick.py [--salt held-out] > /tmp/excerpts.txt
Prints the excerpts in the gold file's format, without sentence marks (added by hand).
"""

from __future__ import annotations

import gzip
import hashlib
import re
import sys
from pathlib import Path

GIT_DOC = Path("/usr/share/doc/git-doc")
DEBIAN_FAQ = Path("/usr/share/doc/debian/FAQ/debian-faq.en.txt.gz")
PG_HTML = Path("/usr/share/doc/postgresql-doc-15/html")
BEFORE, AFTER = 3, 8

CLASSES = {
    "abbreviation": r"\b(?:e\.g\.|i\.e\.|etc\.|vs\.|Dr\.|No\.\s?\d|U\.S\.|cf\.)",
    "version": r"\b\d+\.\d+\.\d+",
    "file name": r"\b[\w-]+\.(?:txt|conf|c|h|sh|py|cfg|gz|deb|html|list)\b",
    "url": r"https?://",
    "size": r"\b\d+(?:\.\d+)?\s?(?:GB|MB|kB|KB|TB)\b",
    "ellipsis": r"\.\.\.|…",
    "prompt line": r"^\s*(?:\$|#|=>|postgres=#)\s+\w",
    "list item": r"^\s*(?:[-*•]|\d{1,2}\.|[a-z]\))\s+\w",
    "table row": r"\S(?: \| |\t)\S",
    "heading": r"^(?:[A-Z][^\n]{2,60})\n(?:[-=~^]{3,})$|^\d+(?:\.\d+)*\.?\s+[A-Z]",
}


SALT = ""  # "--salt held-out": the same rule over another order of the files


def _order(paths: list[Path]) -> list[Path]:
    return sorted(paths, key=lambda p: hashlib.sha1((SALT + p.name).encode()).hexdigest())


def sources() -> dict[str, list[tuple[str, str]]]:
    """Per source, (name, text) of its files in the rule's order (HTML read lazily below)."""
    git = [(f"git-doc/{p.name}", p) for p in _order(list(GIT_DOC.glob("*.txt")))]
    with gzip.open(DEBIAN_FAQ, "rt", encoding="utf-8") as file:
        faq = file.read()
    body = faq[re.search(r"^1\.1\.", faq, re.M).start():]
    pg = [(f"postgresql/{p.name}", p) for p in _order(list(PG_HTML.glob("*.html")))]
    return {"git": git, "faq": [("debian-faq.en.txt", body)], "pg": pg}


def _text(item) -> str:
    _name, source = item
    if isinstance(source, str):
        return source
    if source.suffix == ".html":
        from searchapp.intake.formats.html import read_html_bytes
        return read_html_bytes(source.read_bytes(), source.name).text
    return source.read_text(encoding="utf-8", errors="replace")


def pick(taken: dict[str, list[tuple[int, int]]] | None = None
         ) -> list[tuple[str, str, str]]:
    """(class, source file, excerpt) by the rule in the module's docstring; ``taken``: line
    ranges per file already taken (filled in)."""
    taken = {} if taken is None else taken
    cache: dict[str, str] = {}
    out = []
    for files in sources().values():
        for cls, pattern in CLASSES.items():
            found = _first(files, re.compile(pattern, re.M), taken, cache)
            if found:
                name, lo, hi, lines = found
                taken.setdefault(name, []).append((lo, hi))
                out.append((cls, name, "\n".join(lines[lo:hi])))
    return out


def _first(files, pattern, taken, cache):
    for item in files:
        name = item[0]
        if name not in cache:
            cache[name] = _text(item)
        text = cache[name]
        lines = text.split("\n")
        starts = [0]
        for line in lines:
            starts.append(starts[-1] + len(line) + 1)
        for m in pattern.finditer(text):
            i = max(0, _line_of(starts, m.start()))
            lo, hi = max(0, i - BEFORE), min(len(lines), i + 1 + AFTER)
            if any(lo < b and a < hi for a, b in taken.get(name, [])):
                continue
            return name, lo, hi, lines
    return None


def _line_of(starts: list[int], offset: int) -> int:
    from bisect import bisect_right
    return bisect_right(starts, offset) - 1


def main() -> None:
    global SALT
    taken: dict[str, list[tuple[int, int]]] = {}
    if sys.argv[1:2] == ["--salt"]:
        pick(taken)  # the first set's passages are not taken again (one Debian FAQ)
        SALT = sys.argv[2]
    for cls, name, excerpt in pick(taken):
        sys.stdout.write(f"%% {name} ({cls})\n{excerpt}\n")


if __name__ == "__main__":
    main()
