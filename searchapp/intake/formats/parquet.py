"""Parquet: rows a batch at a time, every column cast to text by Arrow, never by pandas.

Each column becomes the text the file's value stands for, whatever its type:
integers keep every digit (``1`` is ``"1"``, not ``"1.0"``, and a null in an
integer column does not turn the others into floats), floats their shortest
exact form, decimals their digits, booleans ``true``/``false``, dates and
times ISO text, a null ``""``; a list, struct or map is JSON text (a map
with distinct text keys as an object, else as a list of [key, value] pairs).
A binary column is text when every value is UTF-8 (some writers store strings
that way); one holding other bytes (an image, a hash) is left out and the
upload's summary says so. Column names must be distinct.

Example:
    >>> import pyarrow as pa, pyarrow.parquet as pq
    >>> from searchapp.intake.source import Source
    >>> buf = pa.BufferOutputStream()
    >>> pq.write_table(pa.table({"id": [1, None], "text": ["a", "b"], "tags": [[1, 2], []]}), buf)
    >>> reading = read_parquet(Source(buf.getvalue().to_pybytes(), "a.parquet", 10**6), "parquet")
    >>> list(reading.rows)
    [(1, {'id': '1', 'text': 'a', 'tags': '[1, 2]'}), (2, {'id': '', 'text': 'b', 'tags': '[]'})]
"""

from __future__ import annotations

from collections.abc import Collection, Iterator

from searchapp.errors import IngestError
from searchapp.intake.cells import NestingError, cell_text
from searchapp.intake.formats.base import Reading, Row, header_names
from searchapp.intake.formats.registry import Format, register
from searchapp.intake.source import Source

BATCH_ROWS = 2_048  # rows per Arrow batch: memory holds one batch of every column read
READ_BUFFER = 1 << 20  # bytes of a column chunk read at a time (0 would read whole chunks)


def read_parquet(source: Source, _fmt: str, wanted: Collection[str] | None = None) -> Reading:
    """The columns and rows of a Parquet file; ``wanted``: read only these columns."""
    import pyarrow.parquet as pq

    with source.seekable() as file:
        try:
            schema = pq.ParquetFile(file).schema_arrow
        except Exception as exc:  # pyarrow raises several unrelated types
            raise IngestError(f"{source.filename} is not a readable Parquet file: {exc}.") \
                from None
        in_file = list(schema.names)
        if len(set(in_file)) < len(in_file):
            twice = next(n for n in in_file if in_file.count(n) > 1)
            raise IngestError(f"{source.filename}: the schema names column {twice!r} twice. "
                              "Rename one and upload again.")
        names = header_names(in_file, source.filename, "the schema", strip=False)
        field_of = dict(zip(names, in_file, strict=True))  # "column 2" is the field ""
        left_out = [f.name for f in schema if _has_binary(f.type)
                    and not _all_utf8(pq.ParquetFile(file), f.name)]
    notes = tuple(f"Column {name!r} holds binary data (not text) and was not kept."
                  for name in left_out)
    columns = [n for n in names if field_of[n] not in left_out]
    read = [c for c in columns if wanted is None or c in wanted]
    # clean=False: Arrow strings may hold NUL
    return Reading(columns, _rows(source, read, field_of), notes, clean=False)


def _rows(source: Source, columns: list[str], field_of: dict[str, str]) -> Iterator[Row]:
    import pyarrow.parquet as pq

    number = 0
    with source.seekable() as file:
        batches = pq.ParquetFile(file, pre_buffer=False, buffer_size=READ_BUFFER).iter_batches(
            batch_size=BATCH_ROWS, columns=[field_of[c] for c in columns], use_threads=False)
        for batch in batches:
            cells = [_texts(batch.column(field_of[name]), name, number) for name in columns]
            for values in zip(*cells, strict=True):
                number += 1
                yield number, dict(zip(columns, values, strict=True))
            if not columns:  # every column left out: the rows still count
                for _ in range(batch.num_rows):
                    number += 1
                    yield number, {}


def _has_binary(arrow_type) -> bool:
    """Whether a type is binary or holds binary somewhere inside (a list of bytes, ...)."""
    import pyarrow as pa

    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type) or \
            pa.types.is_fixed_size_binary(arrow_type) or pa.types.is_binary_view(arrow_type):
        return True
    return any(_has_binary(arrow_type.field(i).type) for i in range(arrow_type.num_fields))


def _all_utf8(parquet_file, name: str) -> bool:
    """Whether every value of a binary column (inside nested values too) is UTF-8 text."""
    for batch in parquet_file.iter_batches(batch_size=BATCH_ROWS, columns=[name]):
        try:
            for value in batch.column(0).to_pylist():
                cell_text(value)
        except UnicodeDecodeError:
            return False
    return True


def _texts(array, name: str, before: int) -> list[str]:
    """A column of a batch as cell texts (``before``: rows read in earlier batches)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if pa.types.is_dictionary(kind):
        array, kind = array.dictionary_decode(), kind.value_type
    if pa.types.is_null(kind):
        return [""] * len(array)
    if not (pa.types.is_nested(kind) or isinstance(kind, pa.ExtensionType)):
        try:
            return [v if v is not None else "" for v in pc.cast(array, pa.string()).to_pylist()]
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid):
            pass  # a type Arrow cannot write as text: its Python values below
    try:
        values = array.to_pylist(maps_as_pydicts="strict")
    except (KeyError, ValueError, pa.ArrowException):  # a map that repeats a key
        values = _pairs_or_refuse(array, name)
    out = []
    for i, value in enumerate(values):
        try:
            out.append(cell_text(value))
        except NestingError:
            raise IngestError(f"row {before + i + 1}, column {name!r}: values are nested more "
                              "deeply than can be stored.") from None
    return out


def _pairs_or_refuse(array, name: str) -> list:
    """A map that repeats a key as its (key, value) pairs, kept in order; a struct that
    repeats a field name is refused (its cells would lose one of the values), as JSON
    objects with repeated keys are."""
    try:
        return array.to_pylist()
    except ValueError as exc:
        if "duplicate field names" not in str(exc):
            raise
    raise IngestError(f"Column {name!r} holds nested values whose type repeats a field name, "
                      "so one of the values would be lost. Give each field its own name and "
                      "upload it again.") from None


# This module's format (``registry``): what names it and what reads it.
register(Format("parquet", "table", ("parquet", "pq"), "Parquet", "a Parquet file", read_parquet,
                unit="row"))
