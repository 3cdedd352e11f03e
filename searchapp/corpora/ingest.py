"""Read uploads (CSV, TSV, JSONL, JSON array, TXT, Parquet) into documents.

Every problem is reported before anything is stored, naming the line or row:
no text column, duplicate ids, invalid UTF-8 (a BOM is fine; UTF-16 and UTF-32
with a BOM are decoded too), NUL bytes, an empty file, malformed JSON, a file
over the upload limit (``SEARCHAPP_MAX_UPLOAD_BYTES``, counted uncompressed: a
.gz is decompressed in chunks and abandoned at the limit, so a small file that
expands to gigabytes costs no memory), a folder or a missing path. Empty texts
are skipped and counted. Without an id column each
document gets a stable id from its text (``sha256(text)[:16]``, with ``-2``,
``-3`` ... for repeats inside the file), so uploading the same file again adds
nothing twice.

Example:
    >>> table = read_table(b"question,answer\\nHow do I log in?,Click Sign in\\n", "faq.csv")
    >>> guess_text_column(table.frame)
    'question'
    >>> docs, skipped = to_documents(table, "question")
    >>> docs[0].text, docs[0].meta
    ('How do I log in?', {'answer': 'Click Sign in'})
"""

from __future__ import annotations

import codecs
import csv
import gzip
import hashlib
import io
import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import pandas as pd

from searchapp.config import max_upload_bytes
from searchapp.errors import IngestError
from searchapp.store.repo import NewDocument

FORMATS = ("csv", "tsv", "jsonl", "json", "txt", "parquet")
TEXT_COLUMN_GUESSES = ("text", "question", "sentence", "body", "content", "title", "query",
                       "document", "passage", "description", "message", "summary", "abstract")
ID_COLUMN_GUESSES = ("id", "doc_id", "document_id", "qid", "question_id", "external_id", "key")
MAX_TEXT_CHARS = 100_000
READ_CHUNK = 1 << 20  # bytes read (or decompressed) at a time, so the limit holds while reading
# Byte-order marks other than UTF-8's, longest first (UTF-32-LE's starts with UTF-16-LE's).
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


@dataclass
class Table:
    """A parsed upload: all cells as strings, plus how to name a row in messages."""

    frame: pd.DataFrame
    format: str
    row_label: Callable[[int], str]


FORMAT_WORDS = ("CSV (.csv), TSV (.tsv), JSON Lines (.jsonl), JSON (.json), plain text with "
                "one document per line (.txt) or Parquet (.parquet), each also gzipped (.gz)")
KNOWN_OTHERS = {"docx": "a Word document", "doc": "a Word document", "odt": "a text document",
                "xlsx": "an Excel workbook", "xls": "an Excel workbook",
                "ods": "a spreadsheet", "pdf": "a PDF", "zip": "a zip archive",
                "pptx": "a PowerPoint file", "html": "a web page", "htm": "a web page",
                "xml": "an XML file", "md": "a Markdown file"}
EXPORT_HINT = {"xlsx": "; in Excel, File > Save As > CSV UTF-8 makes one we read",
               "xls": "; in Excel, File > Save As > CSV UTF-8 makes one we read",
               "ods": "; File > Save As > Text CSV makes one we read",
               "md": "; renamed to .txt it is read one document per line"}


def detect_format(filename: str) -> str:
    """The format of an upload from its name; the error says in words which ones we read.

    Example:
        >>> detect_format("faq.csv.gz")
        'csv'
        >>> detect_format("notes.docx")
        Traceback (most recent call last):
        ...
        searchapp.errors.IngestError: Cannot read 'notes.docx': it is a Word document (.docx)...
    """
    suffixes = [s.lower().lstrip(".") for s in Path(filename).suffixes]
    suffixes = [s for s in suffixes if s not in ("gz",)]
    ext = suffixes[-1] if suffixes else ""
    ext = {"ndjson": "jsonl", "tab": "tsv", "text": "txt", "pq": "parquet"}.get(ext, ext)
    if ext not in FORMATS:
        what = (f"it is {KNOWN_OTHERS[ext]} (.{ext})" if ext in KNOWN_OTHERS else
                f"files ending in .{ext} are not read" if ext else "its name has no extension")
        raise IngestError(
            f"Cannot read {filename!r}: {what}{EXPORT_HINT.get(ext, '')}. "
            f"Upload {FORMAT_WORDS}."
        )
    return ext


def _decode(raw: bytes, filename: str) -> str:
    """Bytes → text: UTF-8 (with or without a BOM), or UTF-16/UTF-32 when a BOM says so.

    Refuses NUL bytes (naming the line): they are never part of a text file,
    and PostgreSQL cannot store them.
    """
    encoding = next((enc for bom, enc in BOMS if raw.startswith(bom)), "utf-8-sig")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line, column = _line_and_column(raw, exc.start, encoding)
        name = "UTF-8" if encoding == "utf-8-sig" else encoding.upper()
        raise IngestError(
            f"{filename}: line {line}, column {column} is not valid {name} (byte "
            f"0x{raw[exc.start]:02x}). Save the file as UTF-8 and upload it again."
        ) from exc
    _check_no_nul(text, raw, filename)
    if not text.strip():
        raise IngestError(f"{filename} is empty: there is nothing to upload.")
    return text


def _line_and_column(raw: bytes, offset: int, encoding: str) -> tuple[int, int]:
    """Line and column (both from 1, the column in characters) of the byte at ``offset``.

    Example:
        >>> _line_and_column("id,text\\n1,café\\n".encode(), 13, "utf-8")
        (2, 6)
    """
    before = raw[:offset].decode(encoding, errors="replace")
    return before.count("\n") + 1, len(before) - before.rfind("\n")


def _check_no_nul(text: str, raw: bytes, filename: str) -> None:
    """Raise on the first NUL character, naming its line (or saying the file is UTF-16)."""
    at = text.find("\0")
    if at < 0:
        return
    head = raw[:4096]
    if head.count(0) * 3 >= len(head):  # every other byte NUL: UTF-16 text without a BOM
        raise IngestError(
            f"{filename} looks like UTF-16 without a byte-order mark. Save it as UTF-8 "
            "(or UTF-16 with a BOM) and upload it again."
        )
    line = text.count("\n", 0, at) + 1
    raise IngestError(
        f"{filename}: line {line} contains a NUL byte (\\0), which a text file cannot hold. "
        "Remove it (is this a binary file?) and upload it again."
    )


def _size(n: int) -> str:
    """Bytes in binary units for messages: '1 GiB', '500 MiB', '1.5 KiB', '12 bytes'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def _too_big(filename: str, limit: int) -> IngestError:
    return IngestError(
        f"{filename} is larger than the upload limit of {_size(limit)} (uncompressed). "
        "Split it into smaller files, or raise SEARCHAPP_MAX_UPLOAD_BYTES."
    )


def _read_limited(stream: BinaryIO, filename: str, limit: int) -> bytes:
    """Everything ``stream`` holds, read a chunk at a time; stops with an error past ``limit``.

    For a gzip stream each chunk is decompressed as it is read, so memory stays
    under ``limit`` plus one chunk however much the file would expand.
    """
    out, total = io.BytesIO(), 0
    try:
        while chunk := stream.read(min(READ_CHUNK, limit + 1 - total)):
            total += len(chunk)
            if total > limit:
                raise _too_big(filename, limit)
            out.write(chunk)
    except (OSError, EOFError, zlib.error) as exc:  # a damaged or truncated .gz
        raise IngestError(f"{filename} is not a valid gzip file ({exc}). "
                          "Compress it again, or upload it uncompressed.") from exc
    return out.getvalue()


def _check_path(path: Path) -> None:
    """A folder or a missing path, with a message that says what to give instead."""
    if path.is_dir():
        raise IngestError(f"{path} is a folder. Give the path of one file "
                          f"({', '.join('.' + f for f in FORMATS)}, optionally .gz).")
    if not path.exists():
        raise IngestError(f"No file at {path}: check the path and the file name.")


def _open_path(path: Path) -> BinaryIO:
    """Open a file to read; a folder, a missing path or no permission is an IngestError."""
    _check_path(path)
    try:
        return path.open("rb")
    except OSError as exc:
        raise IngestError(f"Cannot read {path}: {exc.strerror}.") from exc


def read_bytes(source: bytes | str | Path, filename: str, limit: int) -> bytes:
    """The upload's bytes, decompressed when the name ends in .gz, at most ``limit`` of them.

    Example:
        >>> read_bytes(gzip.compress(b"text\\nhi\\n"), "a.csv.gz", 100)
        b'text\\nhi\\n'
        >>> read_bytes(gzip.compress(bytes(10_000)), "bomb.txt.gz", 1000)
        Traceback (most recent call last):
        ...
        searchapp.errors.IngestError: bomb.txt.gz is larger than the upload limit of 1000 bytes...
    """
    compressed = filename.lower().endswith(".gz")
    if isinstance(source, bytes):
        if not compressed and len(source) > limit:
            raise _too_big(filename, limit)
        stream: BinaryIO = io.BytesIO(source)
    else:
        stream = _open_path(Path(source))
    with stream:
        if not compressed:
            return _read_limited(stream, filename, limit)
        with gzip.GzipFile(fileobj=stream, mode="rb") as unzipped:
            return _read_limited(unzipped, filename, limit)


def read_table(source: bytes | str | Path, filename: str | None = None,
               max_bytes: int | None = None) -> Table:
    """Parse an upload (bytes or a path) into a Table of strings.

    ``max_bytes`` caps the uncompressed size (default: SEARCHAPP_MAX_UPLOAD_BYTES).
    """
    if not isinstance(source, bytes):
        _check_path(Path(source))  # before the file type, which a folder lacks
        filename = filename or Path(source).name
    filename = filename or "upload"
    fmt = detect_format(filename)  # an unknown type is refused before anything is read
    raw = read_bytes(source, filename, max_upload_bytes() if max_bytes is None else max_bytes)
    if not raw:
        raise IngestError(f"{filename} is empty: there is nothing to upload.")
    if fmt == "parquet":
        frame, row_label = _read_parquet(raw, filename), _row_number
    else:
        text = _decode(raw, filename)
        del raw
        readers = {"csv": _read_delimited, "tsv": _read_delimited, "jsonl": _read_jsonl,
                   "json": _read_json_array, "txt": _read_txt}
        frame, row_label = readers[fmt](text, filename, fmt)
    if frame.empty:
        raise IngestError(f"{filename} has no rows: there is nothing to upload.")
    _check_cells(frame, filename, row_label)
    return Table(frame, fmt, row_label)


def _row_number(i: int) -> str:
    return f"row {i + 1}"


def _check_cells(frame: pd.DataFrame, filename: str, row_label: Callable[[int], str]) -> None:
    """Refuse a NUL character in any cell (a JSON ``\\u0000``, a Parquet string)."""
    for column in frame.columns:
        hits = frame[column].str.contains("\0", regex=False).to_numpy().nonzero()[0]
        if len(hits):
            raise IngestError(f"{filename}: {row_label(int(hits[0]))}, column {column!r}, "
                              "contains a NUL character (\\0). Remove it and upload again.")


def _read_delimited(text: str, filename: str, fmt: str):
    header = text.split("\n", 1)[0]
    # A tab-separated file saved as .csv is common: trust the header line over the name.
    sep = "\t" if fmt == "tsv" or ("\t" in header and "," not in header) else ","
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, dtype=str, keep_default_na=False,
                            quoting=csv.QUOTE_MINIMAL)
    except pd.errors.ParserError as exc:
        raise IngestError(f"{filename}: {exc}. Check the quoting on that line.") from exc
    except pd.errors.EmptyDataError as exc:
        raise IngestError(f"{filename} is empty: there is nothing to upload.") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    return frame, lambda i: f"line {i + 2}"


def _read_jsonl(text: str, filename: str, _fmt: str):
    records, lines = [], []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise IngestError(f"{filename}: line {lineno} is not valid JSON ({exc.msg}).") from exc
        if not isinstance(obj, dict):
            raise IngestError(f"{filename}: line {lineno} is not a JSON object.")
        records.append(obj)
        lines.append(lineno)
    return _records_frame(records), lambda i: f"line {lines[i]}"


def _read_json_array(text: str, filename: str, _fmt: str):
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{filename}: not valid JSON at line {exc.lineno} ({exc.msg}).") from exc
    if isinstance(data, dict):
        lists = [v for v in data.values() if isinstance(v, list)]
        data = lists[0] if len(lists) == 1 else data
    if not isinstance(data, list):
        raise IngestError(f"{filename}: expected a JSON array of objects (or strings).")
    if all(isinstance(x, str) for x in data):
        data = [{"text": x} for x in data]
    bad = next((i for i, x in enumerate(data) if not isinstance(x, dict)), None)
    if bad is not None:
        raise IngestError(f"{filename}: item {bad + 1} of the array is not an object.")
    return _records_frame(data), lambda i: f"item {i + 1}"


def _read_txt(text: str, _filename: str, _fmt: str):
    lines = text.splitlines()
    return pd.DataFrame({"text": lines}), lambda i: f"line {i + 1}"


def _read_parquet(raw: bytes, filename: str) -> pd.DataFrame:
    try:
        frame = pd.read_parquet(io.BytesIO(raw))
    except Exception as exc:  # pyarrow raises several unrelated types
        raise IngestError(f"{filename} is not a readable Parquet file: {exc}.") from exc
    return frame.astype(object).where(frame.notna(), "").astype(str)


def _records_frame(records: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame.from_records(records)
    for col in frame.columns:
        frame[col] = [_cell(v) for v in frame[col]]
    return frame


def _cell(value) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def guess_text_column(frame: pd.DataFrame) -> str:
    """The likely text column: a well-known name, else the column with the longest texts."""
    by_lower = {c.lower(): c for c in frame.columns}
    for name in TEXT_COLUMN_GUESSES:
        if name in by_lower:
            return by_lower[name]
    if len(frame.columns) == 0:
        raise IngestError("The file has no columns.")
    lengths = {c: frame[c].astype(str).str.len().mean() for c in frame.columns}
    return max(lengths, key=lengths.get)


def guess_id_column(frame: pd.DataFrame) -> str | None:
    """A column named like an id whose values are all present and unique, else None."""
    by_lower = {c.lower(): c for c in frame.columns}
    for name in ID_COLUMN_GUESSES:
        col = by_lower.get(name)
        if col is not None:
            values = frame[col].astype(str).str.strip()
            if (values != "").all() and values.is_unique:
                return col
    return None


def _check_column(frame: pd.DataFrame, column: str, role: str) -> None:
    if column not in frame.columns:
        raise IngestError(
            f"No {role} column {column!r}. "
            f"Columns in the file: {', '.join(map(str, frame.columns))}."
        )


def to_documents(
    table: Table,
    text_column: str | None = None,
    id_column: str | None = None,
    meta_columns: list[str] | None = None,
) -> tuple[list[NewDocument], int]:
    """Rows → documents; returns (documents, number of rows skipped for empty text).

    With ``id_column=None`` a column named like an id (``id``, ``qid``, ...) is used when
    its values are unique, else ids are generated from the text; ``id_column=""``
    means "no id column": always generate. Metadata defaults to
    every column other than the text and id columns.
    """
    frame = table.frame
    text_column = text_column or guess_text_column(frame)
    _check_column(frame, text_column, "text")
    if id_column is None:
        id_column = guess_id_column(frame.drop(columns=[text_column]))
    id_column = id_column or None
    if id_column:
        _check_column(frame, id_column, "id")
    if meta_columns is None:
        meta_columns = [c for c in frame.columns if c not in (text_column, id_column)]
    for col in meta_columns:
        _check_column(frame, col, "metadata")
    texts = [str(t).strip() for t in frame[text_column]]
    ids = [str(x).strip() for x in frame[id_column]] if id_column else _generated_ids(texts)
    docs, skipped, first_row_of = [], 0, {}
    meta_rows = frame[meta_columns].to_dict("records") if meta_columns else None
    for i, (doc_id, text) in enumerate(zip(ids, texts, strict=True)):
        if not text:
            skipped += 1
            continue
        if len(text) > MAX_TEXT_CHARS:
            raise IngestError(f"{table.row_label(i)}: the text has {len(text):,} characters; "
                              f"split documents longer than {MAX_TEXT_CHARS:,}.")
        if id_column and not doc_id:
            raise IngestError(f"{table.row_label(i)}: the id column {id_column!r} is empty.")
        if doc_id in first_row_of:
            raise IngestError(
                f"{table.row_label(i)} repeats id {doc_id!r} (first seen at "
                f"{table.row_label(first_row_of[doc_id])}). Ids must be unique."
            )
        first_row_of[doc_id] = i
        docs.append(NewDocument(doc_id, text, meta_rows[i] if meta_rows else {}))
    if not docs:
        raise IngestError(f"Every row has an empty {text_column!r}: nothing to upload.")
    return docs, skipped


def _generated_ids(texts: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for text in texts:
        base = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out
