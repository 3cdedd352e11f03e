"""Metadata filters: ``product=billing``, ``year>=2024``, ``shipped<2024-06-01`` → SQL.

A condition is COLUMN OP VALUE with OP one of ``= != < <= > >=``. The value's
type decides the comparison: a number (``2024``, ``3.5``) compares numerically
with the stored values that read as numbers, an ISO date (``2024-06-01``,
optionally with a time) compares as a date with stored values that start with
one, anything else compares as text (``=`` and ``!=`` only; quotes around a
value keep it text: ``code="007"``). Stored values that do not read as the
value's type never match, and ``!=`` matches exactly the documents ``=`` does
not (those without the column too). Metadata is what an upload kept besides the
text and id columns; an unknown column or operator is a one-line error listing
the valid ones.

Any column name a file can carry works: the name is a bound parameter, never
SQL text (``searchapp.store.meta``). In a written condition a name is taken
as it stands up to the operator; a name that holds ``< > = !``, starts with a
double quote or has spaces at its ends is written in double quotes, with a
quote inside it doubled: ``"a=b"=1``, ``" padded "=x``.

The SQL is the same on SQLite and PostgreSQL except for reading a JSON key; it
runs inside the candidate search (``searchapp.search.service``), never over the corpus
in Python.

Example:
    >>> c = parse_condition("year>=2024")
    >>> c.column, c.op, c.value, c.kind
    ('year', '>=', 2024.0, 'number')
    >>> parse_condition("product = billing").kind
    'text'
    >>> parse_condition("shipped<2024-06-01").kind
    'date'
    >>> parse_condition('"a=b" != 1').column
    'a=b'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from searchapp.errors import InvalidParameterError
from searchapp.store.meta import value_sql

OPERATORS = ("<=", ">=", "!=", "=", "<", ">")  # longest first, for parsing
ORDERED = ("<", "<=", ">", ">=")
_CONDITION = re.compile(r"^\s*([^<>=!]+?)\s*(<=|>=|!=|==|=|<|>)\s*(.*?)\s*$", re.DOTALL)
_QUOTED = re.compile(r'^\s*"((?:[^"]|"")*)"\s*(<=|>=|!=|==|=|<|>)\s*(.*?)\s*$', re.DOTALL)
_NEEDS_QUOTES = re.compile(r'[<>=!]|^"|^\s|\s$|^$')
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


@dataclass(frozen=True)
class Condition:
    """One ``column op value`` with the value typed: number, date (ISO text) or text."""

    column: str
    op: str
    value: float | str
    kind: str  # "number" | "date" | "text"

    def __str__(self) -> str:
        """The condition as it can be written again (``parse_condition`` reads it back)."""
        column = quote_column(self.column)
        if self.kind == "number":
            value = int(self.value) if float(self.value).is_integer() else self.value
            return f"{column}{self.op}{value}"
        value = str(self.value)
        if self.kind == "text" and (typed_value(value)[1] != "text" or value != value.strip()
                                    or value[:1] in "'\"=!<>" or not value):
            # keep it text (and its spaces, and a leading = that would read as "=="):
            # the quotes are taken off
            value = f'"{value}"'
        return f"{column}{self.op}{value}"


def quote_column(name: str) -> str:
    """A column name as a condition writes it: in double quotes when it must be.

    Example:
        >>> quote_column("year"), quote_column("a=b"), quote_column(" x")
        ('year', '"a=b"', '" x"')
    """
    return '"' + name.replace('"', '""') + '"' if _NEEDS_QUOTES.search(name) else name


def typed_value(raw: str) -> tuple[float | str, str]:
    """A filter value with its type: ('2024' → 2024.0, number), ISO dates, else text.

    Example:
        >>> typed_value("2024"), typed_value('"2024"'), typed_value("2024-06-01")
        ((2024.0, 'number'), ('2024', 'text'), ('2024-06-01', 'date'))
    """
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1], "text"
    if _NUMBER.match(raw):
        return float(raw), "number"
    if _DATE.match(raw):
        try:
            (datetime if len(raw) > 10 else date).fromisoformat(raw.replace(" ", "T"))
        except ValueError as exc:
            raise InvalidParameterError(f"{raw!r} is not a valid date: {exc}.") from exc
        return raw.replace(" ", "T"), "date"
    return raw, "text"


def parse_condition(text: str) -> Condition:
    """``'year>=2024'`` → Condition; InvalidParameterError saying what a condition looks like."""
    text = text or ""
    starts_quoted = text.lstrip().startswith('"')
    quoted = _QUOTED.match(text) if starts_quoted else None
    match = quoted or (None if starts_quoted else _CONDITION.match(text))
    if not match or not (quoted or match.group(1).strip()):
        raise InvalidParameterError(
            f"Cannot read the filter {text!r}: write COLUMN OP VALUE, e.g. product=billing or "
            f"year>=2024 (operators: {', '.join(sorted(OPERATORS, key=len))}; a column name "
            'with one of them in it goes in double quotes: "a=b"=1).')
    column = match.group(1).replace('""', '"') if quoted else match.group(1).strip()
    op, raw = match.group(2), match.group(3)
    op = "=" if op == "==" else op
    if raw == "":
        raise InvalidParameterError(f"The filter {text!r} has no value after {op!r}.")
    return make_condition(column, op, raw)


def make_condition(column: str, op: str, raw: str) -> Condition:
    """A condition from its parts (the Search page's filter builder), checked like parsed ones;
    the column name is taken exactly as given."""
    if op not in OPERATORS:
        raise InvalidParameterError(
            f"Unknown operator {op!r}; use one of {', '.join(sorted(OPERATORS, key=len))}.")
    value, kind = typed_value(str(raw))
    if kind == "text" and op in ORDERED:
        raise InvalidParameterError(
            f"{column}{op}{raw}: {op} compares numbers or dates (YYYY-MM-DD), and {raw!r} is "
            "neither; use = or != for text.")
    return Condition(column, op, value, kind)


def parse_conditions(texts: Iterable[str] | None) -> list[Condition]:
    """Every ``--where`` given, parsed (an empty list when none)."""
    return [parse_condition(t) for t in texts or []]


def check_columns(conditions: Sequence[Condition], known: Sequence[str], corpus: str) -> None:
    """InvalidParameterError for a column the corpus' documents never had."""
    for c in conditions:
        if c.column not in known:
            listing = ", ".join(_shown(k) for k in sorted(known)) if known else \
                "none (the upload had only text and id columns)"
            raise InvalidParameterError(
                f"Corpus {corpus!r} has no metadata column {c.column!r}; its columns: "
                f"{listing}.")


def _shown(name: str) -> str:
    """A column name for a one-line message: as it is, or quoted when it would not read so."""
    return name if name and name.isprintable() and name == name.strip() else repr(name)


# ---- SQL -----------------------------------------------------------------------------------
def _number_guard(dialect: str, v: str) -> str:
    if dialect == "postgresql":
        return rf"{v} ~ '^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$'"
    # SQLite: a JSON number, or text made only of what a number is made of (and a digit)
    return (f"(typeof({v}) IN ('integer', 'real') OR (trim({v}) GLOB '*[0-9]*' AND "
            f"NOT trim({v}) GLOB '*[^0-9.eE+-]*'))")


def _date_guard(v: str) -> str:
    return f"{v} LIKE '____-__-__%'"


def condition_sql(c: Condition, i: int, dialect: str) -> tuple[str, dict]:
    """One condition as SQL over ``documents d`` with its parameters (names suffixed ``i``)."""
    val = f"fv{i}"
    v, params = value_sql(dialect, c.column, f"fc{i}")
    params[val] = c.value
    if c.op in ("!=", "!~"):  # exactly the documents "="/"~" leave out: no column, other value
        equal, _ = condition_sql(Condition(c.column, c.op[1:], c.value, c.kind), i, dialect)
        return f"NOT coalesce(({equal}), FALSE)", params
    if c.op == "~":  # a LIKE pattern over "/value/", lower-cased: folder, file and name matches
        return (f"lower('/' || CAST({v} AS TEXT) || '/') LIKE :{val} ESCAPE '\\'", params)
    # CASE, not AND: PostgreSQL may evaluate a cast before its guard, CASE never does;
    # a value that does not read as the type becomes NULL and never matches
    if c.kind == "number":
        cast = f"CAST({v} AS DOUBLE PRECISION)" if dialect == "postgresql" else \
            f"CAST({v} AS REAL)"
        return f"(CASE WHEN {_number_guard(dialect, v)} THEN {cast} END) {c.op} :{val}", params
    if c.kind == "date":
        # ISO dates and timestamps compare as text; a bare date is the day's first moment
        when = f"replace(substr({v}, 1, 26), ' ', 'T')"
        return f"(CASE WHEN {_date_guard(v)} THEN {when} END) {c.op} :{val}", params
    return f"CAST({v} AS TEXT) = :{val}", params


def where_sql(conditions: Sequence[Condition], dialect: str) -> tuple[str, dict]:
    """All conditions AND-ed: (SQL over ``documents d``, parameters); ('1=1', {}) for none.

    Example:
        >>> sql, params = where_sql([parse_condition("year>=2024")], "sqlite")
        >>> params
        {'fc0': '$."year"', 'fv0': 2024.0}
    """
    if not conditions:
        return "1=1", {}
    parts, params = [], {}
    for i, c in enumerate(conditions):
        sql, p = condition_sql(c, i, dialect)
        parts.append(sql)
        params.update(p)
    return " AND ".join(parts), params
