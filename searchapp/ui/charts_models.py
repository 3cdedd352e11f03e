"""Plotly figures for the Models page: the training curve (loss and dev metric by step).

Pure functions of the history that the trainer writes (``history.json``):
``{"total": N, "metric": "spearman", "entries": [{"step", "loss", "lr"} | {"step", "dev"}]}``.

Example:
    >>> fig = training_figure({"total": 4, "metric": "spearman", "entries": [
    ...     {"step": 0, "dev": {"spearman": 50.0}}, {"step": 1, "loss": 0.3, "lr": 1e-5},
    ...     {"step": 2, "loss": 0.2, "lr": 2e-5}, {"step": 2, "dev": {"spearman": 60.0}}]})
    >>> [t.name for t in fig.data]
    ['loss', 'loss (smoothed)', 'dev spearman']
"""

from __future__ import annotations

import plotly.graph_objects as go


def smooth(values: list[float], window: int) -> list[float]:
    """Trailing moving average over ``window`` points (shorter at the start)."""
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v
        if i >= window:
            total -= values[i - window]
        out.append(total / min(i + 1, window))
    return out


def training_figure(history: dict) -> go.Figure:
    """Loss per step (left axis, raw and smoothed) and the dev metric (right axis, markers)."""
    entries = history.get("entries", [])
    steps = [e for e in entries if "loss" in e]
    evals = [e for e in entries if "dev" in e]
    metric = history.get("metric", "")
    fig = go.Figure()
    x, loss = [e["step"] for e in steps], [e["loss"] for e in steps]
    fig.add_trace(go.Scatter(x=x, y=loss, name="loss", mode="lines",
                             line={"width": 1, "color": "rgba(99,110,250,0.35)"}))
    fig.add_trace(go.Scatter(x=x, y=smooth(loss, max(1, len(loss) // 50)),
                             name="loss (smoothed)", mode="lines",
                             line={"width": 2, "color": "rgb(99,110,250)"}))
    fig.add_trace(go.Scatter(x=[e["step"] for e in evals],
                             y=[e["dev"].get(metric) for e in evals], name=f"dev {metric}",
                             mode="lines+markers", yaxis="y2",
                             line={"color": "rgb(239,85,59)"}))
    fig.update_layout(
        xaxis={"title": "step", "range": [0, max(history.get("total", 1), 1)]},
        yaxis={"title": "training loss"},
        yaxis2={"title": f"dev {metric} (×100)", "overlaying": "y", "side": "right"},
        legend={"orientation": "h", "y": 1.12}, margin={"l": 10, "r": 10, "t": 40, "b": 10},
        height=360)
    return fig
