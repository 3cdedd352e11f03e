"""Facets of a search's documents: file type, folder tree, author, language, date histogram.

Counted over the hits of the current query (all k of them, not one page), so
they say what the results hold; each value comes with the filter that narrows
the query to it (``filter_text``), which the Search page adds to the query in
the box with one click. A facet appears when the documents carry its column
(``type``, ``folder``, ``author``, ``lang``, and a date: ``date``, ``modified`` or
``created``, the column ``after:``/``before:`` compare).

Example:
    >>> hits = [{"type": "pdf", "folder": "contracts/2024", "modified": "2024-03-02T10:00Z"},
    ...         {"type": "md", "folder": "contracts/2023", "modified": "2023-11-20"},
    ...         {"type": "pdf", "folder": "notes", "author": "Jane"}]
    >>> f = facets_of(hits)
    >>> [(v.label, v.count, v.filters) for v in f["type"]]
    [('pdf', 2, ('type:pdf',)), ('md', 1, ('type:md',))]
    >>> [(v.label, v.count, v.depth) for v in f["folder"]]
    [('contracts', 2, 0), ('2023', 1, 1), ('2024', 1, 1), ('notes', 1, 0)]
    >>> [(v.label, v.filters) for v in f["date"]][0]
    ('2023-11', ('after:2023-11-01', 'before:2023-12-01'))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from searchapp.search.query_filters import DATE_COLUMNS
from searchapp.search.query_language import filter_text

TOP_VALUES = 8  # values shown per facet (the most common)
FOLDER_DEPTH = 2  # levels of the folder tree shown
MONTHS_AT_MOST = 24  # a wider span is counted by year


@dataclass(frozen=True)
class FacetValue:
    """One value of a facet: what to show, how many hits hold it, the filters it adds."""

    label: str
    count: int
    filters: tuple[str, ...]
    depth: int = 0  # folders: 0 for a top folder, 1 below it...


def facets_of(metas: Iterable[Mapping]) -> dict[str, list[FacetValue]]:
    """The facets of these hits' metadata, each with its values (most common first);
    only the facets that split the hits: two values or more (a folder tree: two folders
    at some level), since one value for every hit narrows nothing."""
    metas = list(metas)
    out: dict[str, list[FacetValue]] = {}
    for name, values in (("type", _counted(metas, "type")),
                         ("folder", _folders(metas)),
                         ("author", _counted(metas, "author")),
                         ("lang", _counted(metas, "lang")),
                         ("date", _dates(metas))):
        if len(values) >= 2:
            out[name] = values
    return out


def _counted(metas: list[Mapping], column: str) -> list[FacetValue]:
    counts = Counter(str(m[column]).strip() for m in metas if str(m.get(column) or "").strip())
    return [FacetValue(v, n, (filter_text(column, v),))
            for v, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_VALUES]]


def _folders(metas: list[Mapping]) -> list[FacetValue]:
    """The folder tree: each folder counts the hits in it or below, a top folder then its
    sub-folders (``FOLDER_DEPTH`` levels), biggest first among siblings."""
    counts: Counter = Counter()
    for m in metas:
        parts = [p for p in str(m.get("folder") or "").replace("\\", "/").split("/") if p]
        for depth in range(min(len(parts), FOLDER_DEPTH)):
            counts[tuple(parts[:depth + 1])] += 1
    tops = sorted((k for k in counts if len(k) == 1), key=lambda k: (-counts[k], k))
    out = []
    for top in tops[:TOP_VALUES]:
        out.append(_folder_value(top, counts[top]))
        children = sorted((k for k in counts if len(k) == 2 and k[0] == top[0]),
                          key=lambda k: (-counts[k], k))
        out += [_folder_value(c, counts[c]) for c in children[:TOP_VALUES]]
    return out


def _folder_value(path: tuple[str, ...], count: int) -> FacetValue:
    return FacetValue(path[-1], count, (filter_text("folder", "/".join(path)),), len(path) - 1)


def _dates(metas: list[Mapping]) -> list[FacetValue]:
    """A histogram of the hits' dates, by month (by year over a wider span), oldest first."""
    column = next((c for c in DATE_COLUMNS if any(m.get(c) for m in metas)), None)
    if column is None:
        return []
    days = [str(m[column])[:10] for m in metas if _is_date(str(m.get(column) or ""))]
    if not days:
        return []
    months = Counter(d[:7] for d in days)
    if len(months) > MONTHS_AT_MOST:
        years = Counter(d[:4] for d in days)
        return [FacetValue(y, n, (f"after:{y}-01-01", f"before:{int(y) + 1}-01-01"))
                for y, n in sorted(years.items())]
    return [FacetValue(m, n, (f"after:{m}-01", f"before:{_next_month(m)}-01"))
            for m, n in sorted(months.items())]


def _is_date(value: str) -> bool:
    return len(value) >= 7 and value[:4].isdigit() and value[4] == "-" and value[5:7].isdigit()


def _next_month(month: str) -> str:
    """``2024-12`` → ``2025-01``."""
    year, number = int(month[:4]), int(month[5:7])
    return f"{year + number // 12}-{number % 12 + 1:02d}"
