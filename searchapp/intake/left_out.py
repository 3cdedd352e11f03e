"""Why a file is left out of an ingest before it is read, in words that say what to do.

One wording for the upload page, the API's files and the files path of folders and
archives (``files_job``): a file that is not a type we read says what it is when we
know (a table, an old Word file) and what to do; a file a watched folder's filters
leave out says so, not "not a type we read".

Example:
    >>> not_read("setup.exe")[:30]
    'is not a type we read (.exe); '
    >>> not_read("faq.csv")[:32]
    'is a table (CSV); a table is add'
"""

from __future__ import annotations

from collections.abc import Sequence

from searchapp.intake.formats.registry import document_type, find, known_as, labels
from searchapp.intake.inputs import NOT_READ, is_archive

FILTERED = "is left out by the folder's filters"


def readable(name: str) -> bool:
    """Whether a file of this name is read as documents: a document type or an archive.

    Example:
        >>> readable("a.PDF"), readable("b.tar.gz"), readable("c.exe")
        (True, True, False)
    """
    return document_type(name) is not None or is_archive(name)


def not_read(name: str) -> str:
    """Why a file of this name is not read as documents, and what to do (to follow its path).

    Example:
        >>> not_read("old.doc")
        'is an old-format Word document, not a type we read; in Word, File > Save As > Word Document (.docx) makes one we read'
    """  # noqa: E501
    table = find(name, "table")
    if table is not None:
        return (f"is a table ({table.label}); a table is added on its own (upload it alone, "
                "or `searchapp ingest FILE`), where its text column is chosen")
    known = known_as(name)
    if known is not None:
        return f"is {known[0]}, not a type we read{known[1]}"
    last = name.rsplit("/", 1)[-1]
    if "." not in last.lstrip("."):
        return (f"{NOT_READ}: its name has no ending that says its type; rename it with one "
                "(.md, .txt, .pdf, ...) and add it again")
    return (f"{NOT_READ} (.{last.rpartition('.')[2].lower()}); save it as "
            f"{labels('document')}, or an archive of them, and add it again")


def filtered(include: Sequence[str] = (), exclude: Sequence[str] = ()) -> str:
    """Why a file a watched folder's ``include``/``exclude`` globs leave out is not read.

    Example:
        >>> filtered(["*.md"], [])
        "is left out by the folder's filters (include '*.md'); change them to read it"
    """
    parts = ([f"include {', '.join(map(repr, include))}"] if include else []) + \
        ([f"exclude {', '.join(map(repr, exclude))}"] if exclude else [])
    return f"{FILTERED} ({'; '.join(parts)}); change them to read it"
