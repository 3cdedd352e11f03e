"""Plotly figures for the Clusters page (pure functions, no streamlit).

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": ["a", "b"], "cluster": [0, -1], "label": ["dog", "outlier"],
    ...                       "x": [0.0, 1.0], "y": [1.0, 0.0], "text": ["A dog.", "Tax."],
    ...                       "highlight": [False, True]})
    >>> [t.name for t in cluster_map(frame, {0: 1}).data]
    ['0 · dog (1)', 'outliers (1)', 'search hits']
"""

from __future__ import annotations

from html import escape

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE = qualitative.Alphabet + qualitative.Dark24
OUTLIER_COLOUR = "#c8c8c8"
COLOURED = 20  # clusters drawn in their own colour; the rest share one grey trace
HOVER = "%{text}<extra></extra>"


def plain(text: object) -> str:
    """User text for a plotly label or legend entry: ``&``, ``<`` and ``>`` escaped
    (plotly reads a subset of HTML there, and labels come from documents).

    Example:
        >>> plain("<b>tax</b> & fees")
        '&lt;b&gt;tax&lt;/b&gt; &amp; fees'
    """
    return escape(str(text), quote=False)


def colour(cluster_id: int) -> str:
    """A stable colour per cluster id; outliers (-1) are light grey."""
    return OUTLIER_COLOUR if cluster_id < 0 else PALETTE[cluster_id % len(PALETTE)]


def cluster_map(frame, sizes: dict[int, int], title: str | None = None,
                coloured: int = COLOURED) -> go.Figure:
    """A Scattergl map: the ``coloured`` biggest clusters in colour, everything else grey.

    Plotly reads a subset of HTML in legend names, ticks and hovers, and the
    labels and texts come from documents: all of them are escaped.

    ``frame`` has columns id, cluster, label, x, y, text, highlight (as from
    ``searchapp.clusters.map_frame``); ``sizes`` gives each cluster's full size
    (the frame may be a sample). Cluster ids are numbered from the biggest, so
    the first ``coloured`` ids get a trace and a legend entry each; the other
    clusters and the outliers share one grey trace ("other"), which keeps the
    legend short and the figure quick to build at hundreds of clusters.
    Highlighted rows get a second, ringed trace.
    """
    fig = go.Figure()
    own = frame[(frame.cluster >= 0) & (frame.cluster < coloured)]
    for cid, part in own.groupby("cluster", sort=True):
        name = f"{cid} · {plain(part.label.iloc[0])} ({sizes.get(cid, len(part)):,})"
        fig.add_trace(_points(part, name,
                              {"size": 6, "color": colour(int(cid)), "opacity": 0.8}))
    rest = frame[(frame.cluster < 0) | (frame.cluster >= coloured)]
    if len(rest):
        others = sum(v for k, v in sizes.items() if k < 0 or k >= coloured) or len(rest)
        what = "other clusters and outliers" if (rest.cluster >= 0).any() else "outliers"
        fig.add_trace(_points(rest, f"{what} ({others:,})",
                              {"size": 4, "color": OUTLIER_COLOUR, "opacity": 0.5}))
    hits = frame[frame.highlight]
    if len(hits):
        fig.add_trace(_points(hits, "search hits", {
            "size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "black"},
            "symbol": "circle"}))
    fig.update_layout(
        title=title, height=620, margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        legend={"itemsizing": "constant", "title": {"text": "clusters"}},
        xaxis={"visible": False}, yaxis={"visible": False}, plot_bgcolor="white")
    return fig


def hover_texts(part) -> np.ndarray:
    """One hover string per point: id, cluster label and text, escaped (user text, not markup).

    One string column built with vectorised string operations, not a (n, 3)
    ``customdata`` table: plotly validates and copies that cell by cell, which
    took most of the page's time at 20,000 points.

    Example:
        >>> import pandas as pd
        >>> hover_texts(pd.DataFrame({"id": ["a"], "label": ["x"], "text": ["<b>hi</b>"]}))[0]
        '<b>a</b> · x<br>&lt;b&gt;hi&lt;/b&gt;'
    """
    def escaped(column):
        return (column.astype(str).str.replace("&", "&amp;", regex=False)
                .str.replace("<", "&lt;", regex=False).str.replace(">", "&gt;", regex=False))

    joined = "<b>" + escaped(part.id) + "</b> · " + escaped(part.label) + "<br>" + \
        escaped(part.text)
    return joined.to_numpy(dtype=object)


def _points(part, name: str, marker: dict) -> go.Scattergl:
    return go.Scattergl(x=part.x.to_numpy(), y=part.y.to_numpy(), mode="markers", name=name,
                        marker=marker, text=hover_texts(part), hovertemplate=HOVER)


def size_bars(clusters: list[dict], outliers: int, top: int = 30) -> go.Figure:
    """Horizontal bars: the ``top`` biggest clusters by size, and the outliers."""
    shown = clusters[:top]
    names = [f"{c['id']} · {plain(c['label'])}" for c in shown] + ["outliers"]
    values = [c["size"] for c in shown] + [outliers]
    colours = [colour(c["id"]) for c in shown] + [OUTLIER_COLOUR]
    fig = go.Figure(go.Bar(x=values[::-1], y=names[::-1], orientation="h",
                           marker_color=colours[::-1]))
    fig.update_layout(height=max(200, 22 * len(names) + 40),
                      margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title="documents")
    return fig
