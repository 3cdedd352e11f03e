"""The facets beside a search's hits: type, folder tree, author and a date histogram.

Counted over the search's hits (``searchapp.search.document_facets``); a click on a
value adds its filter to the query in the box (``type:pdf``; a month adds
``after:`` and ``before:``) and searches again. Drawn when the documents carry at
least two of the facets (files do: type, folder, date); with one, the filter
rows serve, and the list keeps the page's full width.

Example (inside the Search page's fragment, in a column beside the list):
    >>> if wanted(facets_of(h.meta for h in hits)): facet_panel(query, facets)  # doctest: +SKIP
"""

from __future__ import annotations

import streamlit as st

from searchapp.reporting import md_escape
from searchapp.search.document_facets import FacetValue
from searchapp.search.query_language import parse_query
from searchapp.ui.query_chips import set_query

TITLES = {"type": "Type", "folder": "Folder", "author": "Author", "lang": "Language",
          "date": "Date"}
BAR = 5  # characters of the widest histogram bar (the column is narrow)


def wanted(facets: dict[str, list[FacetValue]]) -> bool:
    """Whether the panel earns its column: two facets or more."""
    return len(facets) >= 2


def added(query: str, filters: tuple[str, ...]) -> str:
    """The query with ``filters`` appended, each once.

    Example:
        >>> added("lease type:pdf", ("type:pdf", "folder:contracts"))
        'lease type:pdf folder:contracts'
    """
    have = {str(f) for f in parse_query(query).filters}
    extra = [f for f in filters if str(next(iter(parse_query(f).filters), f)) not in have]
    return " ".join([query.strip(), *extra]).strip()


def facet_panel(query: str, facets: dict[str, list[FacetValue]]) -> None:
    """One small section per facet, each value a button that adds its filter."""
    for name, values in facets.items():
        st.markdown(f"**{TITLES[name]}**")
        widest = max(v.count for v in values)
        for i, value in enumerate(values):
            st.button(_label(name, value, widest), key=f"facet-{name}-{i}", type="tertiary",
                      help=md_escape(" ".join(value.filters)), on_click=set_query,
                      args=(added(query, value.filters),))


def _label(name: str, value: FacetValue, widest: int) -> str:
    text = md_escape(value.label)
    if name == "folder":
        text = "\u2003" * value.depth + ":material/folder: " + text
    if name == "date":
        bar = "▇" * max(1, round(BAR * value.count / widest))
        return f"{text} {bar} {value.count:,}"
    return f"{text} ({value.count:,})"
