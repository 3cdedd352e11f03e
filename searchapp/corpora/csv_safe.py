r"""CSV files that are safe to open in a spreadsheet (no formula injection).

A cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage
return, which some spreadsheets skip before reading such a sign) is run as a
formula by Excel, LibreOffice and Google Sheets: a document text such as
``=HYPERLINK("http://evil", "click")`` would become a live link in a
duplicates report. Every CSV the app or the CLI writes goes through
``safe_csv``, which puts a ``'`` in front of such text cells (OWASP's advice);
numbers (a negative cosine, a map coordinate) are left as they are. Rows end
with CRLF (RFC 4180), so a text holding a bare carriage return is quoted: with
``\n`` endings Python's csv writer leaves it bare, and a reader would start a
new row (and possibly a formula) there.

Example:
    >>> import pandas as pd
    >>> safe_csv(pd.DataFrame({"id": ["=1+1", "a\rb"], "score": [-0.5, 0.9]}))
    'id,score\r\n\'=1+1,-0.5\r\n"a\rb",0.9\r\n'
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def escape_formula(value: object) -> object:
    """``'`` + value when it is text a spreadsheet would read as a formula; else value.

    Example:
        >>> escape_formula("@SUM(A1)"), escape_formula("fine"), escape_formula(-1)
        ("'@SUM(A1)", 'fine', -1)
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _escape_column(column: pd.Series) -> pd.Series:
    """``escape_formula`` on every text cell of a column, vectorised (a million ids is quick)."""
    if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)):
        return column  # numbers, booleans, dates: never read as a formula
    try:
        risky = column.str.startswith(FORMULA_STARTS, na=False)
    except AttributeError:  # an object column holding no text at all
        return column
    if not risky.any():
        return column
    return column.mask(risky, "'" + column[risky].astype(str))


def safe_csv(frame: pd.DataFrame, path: str | Path | None = None) -> str | None:
    """``frame.to_csv(path, index=False)`` with formula-like cells and headers escaped.

    Returns the CSV text when ``path`` is None (for a download button), else
    writes the file and returns None, like ``DataFrame.to_csv``.

    Example:
        >>> safe_csv(pd.DataFrame({"+x": ["-y"]}))
        "'+x\\r\\n'-y\\r\\n"
    """
    safe = frame.rename(columns=escape_formula)
    safe = safe.apply(_escape_column) if len(safe.columns) else safe
    return safe.to_csv(path, index=False, lineterminator="\r\n")


def spreadsheet_bytes(csv_text: str) -> bytes:
    """CSV text as the bytes of a download for a spreadsheet: UTF-8 after a byte order mark.

    Excel opens a CSV file without one in the system's legacy code page, so Arabic,
    Japanese or an accented letter shows as mojibake (``æ—¥æœ¬`` for ``日本``); with it,
    Excel, LibreOffice and Numbers read UTF-8, and pandas, Python's ``utf-8-sig`` and the
    app's own ingest (``intake/source``) skip the mark.

    Example:
        >>> spreadsheet_bytes("id,text\\r\\n1,日本\\r\\n")[:3]
        b'\\xef\\xbb\\xbf'
    """
    return codecs.BOM_UTF8 + csv_text.encode("utf-8")
