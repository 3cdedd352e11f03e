"""Which way an input goes in: the table path (a row is a document) or the files path (a
file is a document; folders and archives are walked). Decided once, here, for the CLI and
the upload page alike, from the format registry.

One file of a table format goes the table path; everything else (documents, several
files, folders, archives) the files path. A name both kinds read (``.txt``: a document
per line, or the whole file as one) is a table unless ``whole_files`` asks otherwise.

Example:
    >>> takes_table(["faq.csv"]), takes_table(["notes.txt"], whole_files=True)
    (True, False)
    >>> takes_table(["a.pdf"]), takes_table(["faq.csv", "b.csv"])
    (False, False)
"""

from __future__ import annotations

from collections.abc import Sequence

from searchapp.intake.formats.registry import find


def takes_table(names: Sequence[str], whole_files: bool = False) -> bool:
    """Whether these inputs (file names; a folder is never a table) go the table path."""
    if len(names) != 1 or find(names[0], "table") is None:
        return False
    return not (whole_files and find(names[0], "document") is not None)
