"""The heading path of a document as it is read: headings in, parts per section out.

Markdown, reStructuredText, Word, OpenDocument and web pages all say the same
thing in different ways: "a level-2 heading starts here". ``Sections`` keeps
the path of headings above the current point ("1 Intro > 1.2 Scope", a deeper
heading dropped when a shallower one follows) and makes one ``Part`` per
section, its heading as the first line, so a passage never spans two sections
and a hit names its section. A heading with nothing under it before a deeper one
(a chapter's title, then its first section) is the first line of that section's
part, so its words are searchable too.

Example:
    >>> s = Sections()
    >>> s.heading(1, "1 Intro"); s.text("Hello."); s.heading(2, "1.2 Scope"); s.text("Small.")
    >>> s.heading(1, "2 Use"); s.text("Run it.")
    >>> [p.section for p in s.parts()], s.parts()[1].text
    (['1 Intro', '1 Intro > 1.2 Scope', '2 Use'], '1.2 Scope\\nSmall.')
    >>> t = Sections(); t.heading(1, "Guide"); t.heading(2, "Install"); t.text("Run make.")
    >>> [(p.section, p.text) for p in t.parts()]
    [('Guide > Install', 'Guide\\nInstall\\nRun make.')]
"""

from __future__ import annotations

from searchapp.intake.formats.document import Part

SEPARATOR = " > "


class Sections:
    """Text and headings in reading order, collected into one ``Part`` per section."""

    def __init__(self, page: int | None = None):
        self._path: list[tuple[int, str]] = []
        self._lines: list[str] = []
        self._parts: list[Part] = []
        self._page = page

    @property
    def path(self) -> str | None:
        """The current heading path, or None before the first heading."""
        return SEPARATOR.join(title for _, title in self._path) or None

    def heading(self, level: int, title: str) -> None:
        """A heading of ``level`` (1 the top): the section before it ends here."""
        title = " ".join(title.split())
        if not title:
            return
        if not (self._only_headings() and self._path and level > self._path[-1][0]):
            self._flush()  # else a chapter's title with nothing under it leads its first section
        while self._path and self._path[-1][0] >= level:
            self._path.pop()
        self._path.append((level, title))
        self._lines.append(title)

    def text(self, text: str) -> None:
        """Text of the current section (a paragraph, a table row, a line)."""
        if text.strip():
            self._lines.append(text.strip("\n"))

    def _only_headings(self) -> bool:
        """Whether the section being read holds nothing yet but heading lines."""
        titles = {title for _, title in self._path}
        return bool(self._lines) and all(line in titles for line in self._lines)

    def _flush(self) -> None:
        """End a section: a part of its lines (a heading with nothing under it is a part of
        its own too, unless a deeper heading follows, whose part it then leads: see
        ``heading``)."""
        body = "\n".join(self._lines).strip()
        if body:
            self._parts.append(Part(body, page=self._page, section=self.path))
        self._lines = []

    def parts(self) -> list[Part]:
        """The parts read so far, the last section included."""
        self._flush()
        return list(self._parts)
