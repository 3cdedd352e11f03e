"""Every input format the app reads, one record each: how a file of it is known, named and read.

A ``Format`` says what kind of input it is (a ``document``: a file is one or more
documents, or a ``table``: a row is a document), the file name endings that mean it
(the first one named in lists, the rest aliases), its words for lists and
sentences, what its first bytes may look like, its reader and, for a document, where
that reader looks for text (a file with none is refused saying what was tried). Each
reader module registers its formats where it defines the reader (``register``), and this package's
``__init__`` imports the reader modules, so the registry is whole once
``searchapp.intake.formats`` is imported.

Everything that names formats is made from these records: the upload page's
label, the CLI's help, the refusals ("Cannot read 'a.exe' ... Add PDF (.pdf), ..."),
a watched folder's choice of files, the check of a file's first bytes. Adding a
format is one reader module with one ``register`` call (and its import in
``__init__``); nothing else lists formats.

Example:
    >>> from searchapp.intake import formats  # the readers, registered
    >>> find("Guide.PDF", "document").name, find("notes.markdown", "document").name
    ('pdf', 'md')
    >>> find("faq.csv", "document") is None, find("faq.ndjson", "table").name
    (True, 'jsonl')
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import PurePath

KINDS = ("document", "table")
TEXTUAL = frozenset({"text", "html", "xml"})  # what sniff() calls a text file's first bytes
# File types people try that no reader takes, with what to do instead.
NOT_READ = {
    "doc": ("an old-format Word document", "; in Word, File > Save As > Word Document (.docx) "
            "makes one we read"),
    "xls": ("an old-format Excel workbook", "; in Excel, File > Save As > Excel Workbook (.xlsx) "
            "or CSV UTF-8 makes one we read"),
    "ppt": ("an old-format PowerPoint file", "; in PowerPoint, File > Save As > PowerPoint "
            "Presentation (.pptx) makes one we read"),
    "xml": ("an XML file", ""),
}


@dataclass(frozen=True)
class Format:
    """One input format (see the module's docstring).

    Example:
        >>> Format("toy", "document", ("toy",), "Toy", "a toy file", lambda *a: []).listed
        'Toy (.toy)'
    """

    name: str  # canonical: a document's metadata "type", a table reader's format argument
    kind: str  # "document" or "table"
    extensions: tuple[str, ...]  # lower case, no dot; extensions[0] is the one lists name
    label: str  # in a list of what we read: "PDF", "Word", "JSON Lines"
    words: str  # in a sentence: "a PDF", "a Word document"
    reader: Callable = field(compare=False)  # document: (path, name, limits[, **kw]) -> docs;
    #                                          table: (source, name, wanted) -> Reading
    content: frozenset[str] = TEXTUAL  # documents: what sniff() may say of its first bytes
    unit: str = "row"  # tables: what a row's number counts in messages ("line", "item")
    progress: bool = False  # documents: the reader takes ``progress=`` (a PDF's pages, read)
    text_in: str = ""  # documents: every place its reader looks for text, for the refusal of a
    #                    file where it found none ("slide text, notes, tables or chart labels")

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"A format's kind is one of {KINDS}; got {self.kind!r}.")
        if not self.extensions or any(e != e.lower().lstrip(".") for e in self.extensions):
            raise ValueError(f"Format {self.name!r}: extensions are lower case, without a dot.")

    @property
    def listed(self) -> str:
        """``"web page (.html/.htm/.xhtml)"``: its label and every ending that means it."""
        return f"{self.label} ({'/'.join('.' + e for e in self.extensions)})"


_FORMATS: dict[tuple[str, str], Format] = {}  # (kind, extension) -> format, in registration order


def register(fmt: Format) -> Format:
    """Add a format (its reader module calls this once); an ending taken by another format
    of the same kind is refused, so two readers never compete for one file.

    Example:
        >>> TOY = Format("toy", "document", ("toy",), "Toy", "a toy file", lambda *a: [])
        >>> with registered(TOY):
        ...     find("a.toy", "document").label
        'Toy'
    """
    for ext in fmt.extensions:
        held = _FORMATS.get((fmt.kind, ext))
        if held is not None and held != fmt:
            raise ValueError(f".{ext} is already {held.words} ({held.name}); "
                             f"cannot register {fmt.name!r} for it too.")
    for ext in fmt.extensions:
        _FORMATS[(fmt.kind, ext)] = fmt
    return fmt


def unregister(fmt: Format) -> None:
    """Remove a format registered with ``register`` (tests add toy formats for a while)."""
    for ext in fmt.extensions:
        if _FORMATS.get((fmt.kind, ext)) == fmt:
            del _FORMATS[(fmt.kind, ext)]


@contextmanager
def registered(fmt: Format) -> Iterator[Format]:
    """``fmt`` registered for the ``with`` block, then removed."""
    register(fmt)
    try:
        yield fmt
    finally:
        unregister(fmt)


def extension(filename: str | PurePath, kind: str) -> str:
    """The ending that decides a file's format: the last suffix, lower case, without its dot;
    a table's ``.gz`` is looked through (``faq.csv.gz`` is a CSV)."""
    suffixes = [s.lower().lstrip(".") for s in PurePath(filename).suffixes]
    if kind == "table":
        suffixes = [s for s in suffixes if s != "gz"]
    return suffixes[-1] if suffixes else ""


def find(filename: str | PurePath, kind: str) -> Format | None:
    """The format of ``kind`` a file of this name is read as, or None."""
    return _FORMATS.get((kind, extension(filename, kind)))


def named(name: str, kind: str) -> Format:
    """The format of ``kind`` whose canonical name is ``name`` (a table's stored format)."""
    for fmt in formats(kind):
        if fmt.name == name:
            return fmt
    raise KeyError(f"no {kind} format named {name!r}")


def document_type(filename: str | PurePath) -> str | None:
    """The canonical format name of a document file (its metadata's "type"), or None.

    Example:
        >>> document_type("Guide.PDF"), document_type("a.csv")
        ('pdf', None)
    """
    fmt = find(filename, "document")
    return fmt.name if fmt else None


def formats(kind: str) -> list[Format]:
    """The formats of one kind, each once, in the order they were registered."""
    return list(dict.fromkeys(f for (k, _), f in _FORMATS.items() if k == kind))


def extensions(kind: str) -> tuple[str, ...]:
    """Every ending read as ``kind`` (aliases too)."""
    return tuple(ext for (k, ext) in _FORMATS if k == kind)


def listing(kind: str) -> str:
    """What we read of one kind, in words: ``"PDF (.pdf), Word (.docx), ..."``."""
    return ", ".join(f.listed for f in formats(kind))


def reader_modules() -> tuple[str, ...]:
    """The modules whose import registers today's formats: a reader process started fresh
    imports them, so a format registered here (a plugin's, a test's) is read there too."""
    return tuple(dict.fromkeys(f.reader.__module__ for kind in KINDS for f in formats(kind)))


def labels(kind: str) -> str:
    """The formats of one kind by label alone, for a short list: ``"PDF, Word, ..."``."""
    return ", ".join(f.label for f in formats(kind))


def known_as(filename: str | PurePath) -> tuple[str, str] | None:
    """What a file of this name is (``"a Word document"``) when it is not a table, and a hint
    of what to do: for the message that refuses it as a table."""
    ext = extension(filename, "table")
    fmt = _FORMATS.get(("document", ext))
    if fmt is not None:
        return fmt.words, ""
    return NOT_READ.get(ext)
