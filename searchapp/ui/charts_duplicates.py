"""Plotly figures for the Duplicates page (pure functions: data in, go.Figure out).

Example:
    >>> curve = {"precision": [1.0, 0.8, 0.6], "recall": [0.2, 0.7, 1.0],
    ...          "threshold": [0.9, 0.6, 0.1]}
    >>> fig = precision_recall_figure(curve, best=0.6, current=0.8)
    >>> [trace.name for trace in fig.data]
    ['precision-recall', 'best F1 (0.600)', 'current (0.800)']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go


def _nearest(curve: dict, threshold: float) -> int:
    """The curve point whose threshold is closest to ``threshold``."""
    return int(np.argmin(np.abs(np.asarray(curve["threshold"], float) - threshold)))


def precision_recall_figure(curve: dict, best: float | None = None,
                            current: float | None = None, title: str = "") -> go.Figure:
    """Precision against recall, one point per threshold; the best-F1 and current ones marked.

    ``curve`` is {"precision": [...], "recall": [...], "threshold": [...]} (0-1 scale).
    """
    fig = go.Figure(go.Scatter(
        x=curve["recall"], y=curve["precision"], mode="lines", name="precision-recall",
        customdata=curve["threshold"],
        hovertemplate="threshold %{customdata:.3f}<br>recall %{x:.3f}<br>"
                      "precision %{y:.3f}<extra></extra>"))
    for value, name, symbol in ((best, "best F1", "star"), (current, "current", "circle")):
        if value is None:
            continue
        i = _nearest(curve, value)
        fig.add_trace(go.Scatter(
            x=[curve["recall"][i]], y=[curve["precision"][i]], mode="markers",
            name=f"{name} ({value:.3f})", marker={"size": 14, "symbol": symbol},
            hovertemplate=f"{name}: threshold {value:.3f}<br>recall %{{x:.3f}}<br>"
                          "precision %{y:.3f}<extra></extra>"))
    fig.update_layout(title=title or None, xaxis_title="recall", yaxis_title="precision",
                      xaxis_range=[0, 1.02], yaxis_range=[0, 1.02], height=380,
                      margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
                      legend={"orientation": "h", "y": -0.2})
    return fig


def score_histogram(scores: Sequence[float], threshold: float,
                    calibrated: float | None = None) -> go.Figure:
    """How the mined pairs' cosines spread, with the threshold (and calibrated value) marked.

    Binned here (40 bins), so the browser gets 40 bars whatever the number of pairs.

    Example:
        >>> score_histogram([0.81, 0.9, 0.95], 0.8).layout.shapes[0].x0
        0.8
    """
    counts, edges = np.histogram(np.asarray(scores, dtype=np.float64), bins=40)
    centres, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)
    fig = go.Figure(go.Bar(x=centres, y=counts, width=widths, name="pairs",
                           hovertemplate="cosine %{x:.3f}<br>%{y} pairs<extra></extra>"))
    fig.add_vline(x=threshold, line_dash="dash", annotation_text="threshold")
    if calibrated is not None and abs(calibrated - threshold) > 1e-9:
        fig.add_vline(x=calibrated, line_dash="dot", line_color="green",
                      annotation_text="calibrated", annotation_position="bottom right")
    fig.update_layout(xaxis_title="cosine", yaxis_title="pairs", height=260, bargap=0.05,
                      margin={"l": 10, "r": 10, "t": 10, "b": 10}, showlegend=False)
    return fig
