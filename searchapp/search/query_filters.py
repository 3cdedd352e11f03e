"""What a typed query's filters and phrases mean for one corpus: SQL conditions and notices.

``searchapp.search.query_language`` reads the text; this module turns what it
read into the conditions the candidate searches apply (``searchapp.search.filters``
conditions over the documents' metadata, and full-text conditions for phrases
and exclusions), and into the lines a front end shows: the filters understood
(the chips of the page) and a notice for each one that cannot apply here.

The fields:

- ``type:pdf``: the document's format, by name, ending or label (``md``,
  ``markdown``, ``word``, ``docx``).
- ``folder:contracts``, ``folder:contracts/2024``: documents of that folder or
  one below it, anywhere in the tree (whole folder names, case-insensitive).
- ``file:*.md``, ``file:report``: the file name, ``*`` and ``?`` as wildcards;
  without one, names that contain the value.
- ``author:jane``: authors whose name contains the value, case-insensitive.
- ``lang:de``: the language column, where the corpus has one.
- ``after:2024-03-01``, ``before:2024``: the document's date (its ``date``,
  else ``modified``, else ``created`` column); a year or a month stands for its
  first day.
- any metadata column: ``product:billing``, ``year>=2024``, ``-status:closed``
  (as ``--where`` compares them).

Example:
    >>> plan = query_plan(parse_query("lease type:markdown -folder:drafts"),
    ...                   ["type", "folder", "path"], 1, "sqlite")
    >>> [(c.column, c.op, c.value) for c in plan.conditions]
    [('type', '=', 'md'), ('folder', '!~', '%/drafts/%')]
    >>> plan.chips
    ['type:markdown', '-folder:drafts']
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from searchapp.errors import InvalidParameterError
from searchapp.intake.formats import registry
from searchapp.search.filters import Condition, make_condition
from searchapp.search.query_language import (
    BUILTIN_FIELDS,
    FieldFilter,
    ParsedQuery,
    parse_query,
)
from searchapp.store import fulltext

DATE_COLUMNS = ("date", "modified", "created")  # what after:/before: compare, first present
_PARTIAL_DATE = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")


@dataclass
class QueryPlan:
    """A parsed query made ready for one corpus."""

    parsed: ParsedQuery
    conditions: list[Condition] = field(default_factory=list)  # metadata, AND-ed
    text_conditions: list[tuple[str, dict]] = field(default_factory=list)  # full text, AND-ed
    chips: list[str] = field(default_factory=list)  # the filters understood, as written
    applied: list[FieldFilter] = field(default_factory=list)  # the same, as parsed
    notices: list[str] = field(default_factory=list)  # one line per thing not applied

    @property
    def filtered(self) -> bool:
        return bool(self.conditions or self.text_conditions)

    def as_json(self) -> dict:
        """What the CLI's ``--json`` and the API return as ``understood``.

        Example:
            >>> understand('lease "notice period" -draft type:pdf', ["type"], 1,
            ...            "sqlite").as_json()   # doctest: +NORMALIZE_WHITESPACE
            {'text': 'lease notice period', 'phrases': ['notice period'], 'excluded': ['draft'],
             'any_of': [], 'filters': ['type:pdf'], 'notices': []}
        """
        p = self.parsed
        return {"text": p.text, "phrases": list(p.phrases), "excluded": list(p.excluded),
                "any_of": [list(g) for g in p.any_of], "filters": list(self.chips),
                "notices": list(self.notices)}


def understand(typed: str, columns: Sequence[str], corpus_id: int, dialect: str
               ) -> QueryPlan:
    """Parse ``typed`` and plan it for a corpus: ``query_plan(parse_query(typed, columns))``.

    Example:
        >>> understand("lease -draft", [], 1, "sqlite").text_conditions[0][0]
        'd.id NOT IN (SELECT rowid FROM documents_fts_1 WHERE documents_fts_1 MATCH :ph0)'
    """
    return query_plan(parse_query(typed, columns), columns, corpus_id, dialect)


def query_plan(parsed: ParsedQuery, columns: Sequence[str], corpus_id: int,
               dialect: str) -> QueryPlan:
    """The conditions and notices of ``parsed`` for a corpus with metadata ``columns``.

    Never raises for what was typed: a filter that cannot apply here becomes a
    notice that says why and which fields there are.
    """
    plan = QueryPlan(parsed)
    for f in parsed.filters:
        try:
            condition = field_condition(f, columns)
        except InvalidParameterError as exc:
            plan.notices.append(str(exc))
            continue
        plan.conditions.append(condition)
        plan.chips.append(str(f))
        plan.applied.append(f)
    for name in parsed.unknown_fields:
        plan.notices.append(f"{name}: is not a field here, so it was searched as text. "
                            f"Fields: {', '.join(fields_listing(columns))}.")
    _text_conditions(plan, corpus_id, dialect)
    return plan


def fields_listing(columns: Sequence[str]) -> list[str]:
    """The fields a query can filter on in a corpus with these metadata columns.

    Example:
        >>> fields_listing(["product", "year"])
        ['type', 'folder', 'file', 'author', 'lang', 'after', 'before', 'product', 'year']
    """
    return list(BUILTIN_FIELDS) + [c for c in columns if c.lower() not in BUILTIN_FIELDS]


def field_condition(f: FieldFilter, columns: Sequence[str]) -> Condition:
    """One typed filter as a metadata condition; InvalidParameterError when it cannot apply."""
    negate = "!" if f.negated else ""
    name = f.field
    if name in ("after", "before"):
        return _date_condition(f, columns)
    if name == "type" and "type" in columns:
        return Condition("type", negate + "=", _format_name(f.value), "text")
    if name == "folder" and "folder" in columns:
        return Condition("folder", negate + "~", f"%/{_like(_folder(f.value))}/%", "pattern")
    if name == "file" and ("file" in columns or "path" in columns):
        column = "file" if "file" in columns else "path"
        return Condition(column, negate + "~", _file_pattern(f.value), "pattern")
    if name == "author" and "author" in columns:
        return Condition("author", negate + "~", f"%{_like(f.value.lower())}%", "pattern")
    if name in columns:
        op = "=" if f.op == ":" else f.op
        condition = make_condition(name, op, f.value)
        if f.negated:
            if condition.op != "=":
                raise InvalidParameterError(f"-{name}{f.op}{f.value}: only ':' filters can be "
                                            "negated; write the opposite comparison instead.")
            return Condition(name, "!=", condition.value, condition.kind)
        return condition
    raise InvalidParameterError(
        f"{f}: this corpus' documents have no {name!r}, so the filter was left out. "
        f"Fields: {', '.join(fields_listing(columns))}.")


def _date_condition(f: FieldFilter, columns: Sequence[str]) -> Condition:
    column = next((c for c in DATE_COLUMNS if c in columns), None)
    if column is None:
        raise InvalidParameterError(f"{f}: this corpus' documents have no date (no "
                                    f"{', '.join(DATE_COLUMNS)} column), so it was left out.")
    day = _first_day(f.value)
    if day is None:
        raise InvalidParameterError(f"{f}: {f.field}: takes a date like 2024-03-01 (or "
                                    "2024-03, or 2024); the filter was left out.")
    op = ">=" if f.field == "after" else "<"
    if f.negated:
        op = "<" if op == ">=" else ">="
    return Condition(column, op, day, "date")


def _first_day(value: str) -> str | None:
    """``2024`` → 2024-01-01, ``2024-3`` → 2024-03-01, a full date as is; None if not a date."""
    from datetime import date

    match = _PARTIAL_DATE.match(value.strip())
    if not match:
        return None
    year, month, day = (int(g) if g else 1 for g in match.groups())
    try:
        return date(year, month, day).isoformat()
    except ValueError:
        return None


def _format_name(value: str) -> str:
    """A typed type as the canonical format name: by ending, name or label (``word``)."""
    wanted = value.strip().lower().lstrip(".")
    fmt = registry.find(f"x.{wanted}", "document")
    if fmt is not None:
        return fmt.name
    for fmt in registry.formats("document"):
        if wanted in (fmt.name, fmt.label.lower()):
            return fmt.name
    return wanted


def _folder(value: str) -> str:
    """A typed folder as whole folder names: no slashes at its ends, one between names."""
    return "/".join(p for p in value.strip().lower().replace("\\", "/").split("/") if p)


def _like(text: str) -> str:
    """``text`` matched literally inside a LIKE pattern (ESCAPE '\\')."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _file_pattern(value: str) -> str:
    """``*.md`` → the whole name matches the glob; ``report`` → the name contains it."""
    value = value.strip().lower()
    like = _like(value).replace("*", "%").replace("?", "_")
    if "*" in value or "?" in value:
        return f"%/{like}/"  # "/name/" ends the pattern: the last part of a path too
    return f"%{like}%"


def _text_conditions(plan: QueryPlan, corpus_id: int, dialect: str) -> None:
    """Required phrases, OR groups holding a phrase, and exclusions as full-text SQL."""
    parsed = plan.parsed
    n = 0
    for phrase in parsed.phrases:
        plan.text_conditions.append(fulltext.phrase_condition(dialect, corpus_id, [phrase],
                                                              f"ph{n}"))
        n += 1
    for group in parsed.any_of:
        plan.text_conditions.append(fulltext.phrase_condition(dialect, corpus_id, list(group),
                                                              f"ph{n}"))
        n += 1
    for term in parsed.excluded:
        plan.text_conditions.append(fulltext.phrase_condition(dialect, corpus_id, [term],
                                                              f"ph{n}", present=False))
        n += 1
