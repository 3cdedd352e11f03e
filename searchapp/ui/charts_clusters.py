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

import plotly.graph_objects as go
from plotly.colors import qualitative

PALETTE = qualitative.Alphabet + qualitative.Dark24
OUTLIER_COLOUR = "#c8c8c8"
HOVER = "<b>%{customdata[0]}</b><br>%{customdata[1]}<extra>%{customdata[2]}</extra>"


def colour(cluster_id: int) -> str:
    """A stable colour per cluster id; outliers (-1) are light grey."""
    return OUTLIER_COLOUR if cluster_id < 0 else PALETTE[cluster_id % len(PALETTE)]


def cluster_map(frame, sizes: dict[int, int], title: str | None = None) -> go.Figure:
    """A Scattergl map: one trace per cluster (the legend lists label and size).

    ``frame`` has columns id, cluster, label, x, y, text, highlight (as from
    ``searchapp.clusters.map_frame``); ``sizes`` gives each cluster's full size
    (the frame may be a sample). Highlighted rows get a second, ringed trace.
    """
    fig = go.Figure()
    for cid in sorted(frame.cluster.unique(), key=lambda c: (c < 0, c)):
        part = frame[frame.cluster == cid]
        label = part.label.iloc[0]
        name = (f"outliers ({sizes.get(-1, len(part)):,})" if cid < 0
                else f"{cid} · {label} ({sizes.get(cid, len(part)):,})")
        fig.add_trace(go.Scattergl(
            x=part.x, y=part.y, mode="markers", name=name,
            marker={"size": 4 if cid < 0 else 6, "color": colour(int(cid)),
                    "opacity": 0.5 if cid < 0 else 0.8},
            customdata=part[["id", "text", "label"]].to_numpy(),  # (n, 3): hover fields
            hovertemplate=HOVER))
    hits = frame[frame.highlight]
    if len(hits):
        fig.add_trace(go.Scattergl(
            x=hits.x, y=hits.y, mode="markers", name="search hits",
            marker={"size": 13, "color": "rgba(0,0,0,0)", "line": {"width": 2, "color": "black"},
                    "symbol": "circle"},
            customdata=hits[["id", "text", "label"]].to_numpy(),
            hovertemplate=HOVER))
    fig.update_layout(
        title=title, height=620, margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        legend={"itemsizing": "constant", "title": {"text": "clusters"}},
        xaxis={"visible": False}, yaxis={"visible": False}, plot_bgcolor="white")
    return fig


def size_bars(clusters: list[dict], outliers: int, top: int = 30) -> go.Figure:
    """Horizontal bars: the ``top`` biggest clusters by size, and the outliers."""
    shown = clusters[:top]
    names = [f"{c['id']} · {c['label']}" for c in shown] + ["outliers"]
    values = [c["size"] for c in shown] + [outliers]
    colours = [colour(c["id"]) for c in shown] + [OUTLIER_COLOUR]
    fig = go.Figure(go.Bar(x=values[::-1], y=names[::-1], orientation="h",
                           marker_color=colours[::-1]))
    fig.update_layout(height=max(200, 22 * len(names) + 40),
                      margin={"l": 10, "r": 10, "t": 10, "b": 10}, xaxis_title="documents")
    return fig
