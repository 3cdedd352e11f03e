"""Tables and figures of evaluation reports (the Evaluate page and the Models page's verdicts).

Pure functions of the JSON an evaluation writes (``searchapp.evaluation.corpus``:
each metric ``{"value", "low", "high", "n"}``, ×100), so they are tested without a page.

Example:
    >>> report = {"queries": {"modes": {"hybrid": {m: {"value": 70.0, "low": 60.0,
    ...     "high": 80.0, "n": 12} for m in ("ndcg@10", "mrr@10", "recall@10", "recall@100")}}},
    ...     "pairs": None}
    >>> query_table(report).loc[0, "nDCG@10"]
    '70.00 [60.00, 80.00]'
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

LABELS = {"ndcg@10": "nDCG@10", "mrr@10": "MRR@10", "recall@10": "Recall@10",
          "recall@100": "Recall@100"}
PRIMARY = (("queries", "hybrid", "ndcg@10", "hybrid nDCG@10"), ("pairs", None, "ap", "pair AP"))


def cell(estimate: dict | None, digits: int = 2) -> str:
    """``70.00 [60.00, 80.00]``: the value and its 95% interval; "" when absent."""
    if not estimate:
        return ""
    return (f"{estimate['value']:.{digits}f} [{estimate['low']:.{digits}f}, "
            f"{estimate['high']:.{digits}f}]")


def query_table(report: dict) -> pd.DataFrame:
    """One row per search mode: each metric with its interval, and the number of queries."""
    modes = (report.get("queries") or {}).get("modes", {})
    rows = [{"mode": mode, **{LABELS[m]: cell(v[m]) for m in LABELS},
             "queries": v["ndcg@10"]["n"]} for mode, v in modes.items()]
    return pd.DataFrame(rows)


def pair_table(report: dict) -> pd.DataFrame:
    """AP, best F1 and its threshold with intervals, and the pairs behind them."""
    pairs = report.get("pairs")
    if not pairs:
        return pd.DataFrame()
    return pd.DataFrame([{"AP": cell(pairs["ap"]), "best F1": cell(pairs["f1"]),
                          "at threshold": cell(pairs["threshold"], 4), "pairs": pairs["n"],
                          "duplicates": pairs["positives"]}])


def primary_values(report: dict) -> dict[str, dict]:
    """{"hybrid nDCG@10": estimate, "pair AP": estimate} for the metrics a report has.

    Example:
        >>> primary_values({"queries": None, "pairs": {"ap": {"value": 80.0}}})
        {'pair AP': {'value': 80.0}}
    """
    out = {}
    for part, mode, metric, label in PRIMARY:
        section = report.get(part)
        if not section:
            continue
        value = section["modes"].get(mode, {}).get(metric) if mode else section.get(metric)
        if value:
            out[label] = value
    return out


def comparison_table(comparison: dict) -> pd.DataFrame:
    """Current and candidate side by side on the primary metrics, the difference and verdict.

    Example:
        >>> d = {"a": {"value": 80.0, "low": 75.0, "high": 85.0}, "b": {"value": 84.0,
        ...      "low": 79.0, "high": 88.0}, "delta": 4.0, "low": 1.5, "high": 6.4,
        ...      "verdict": "better"}
        >>> comparison_table({"current": "m0", "candidate": "m1", "queries": {},
        ...                   "pairs": {"ap": d}}).loc[0, "difference"]
        '+4.00 [+1.50, +6.40]'
    """
    rows = []
    items = [(f"{mode} {LABELS[m]}", d) for mode, ms in comparison.get("queries", {}).items()
             for m, d in ms.items()]
    items += [(f"pair {m.upper() if m == 'ap' else 'best F1'}", d)
              for m, d in comparison.get("pairs", {}).items()]
    for name, d in items:
        rows.append({"metric": name, comparison["current"]: cell(d["a"]),
                     comparison["candidate"]: cell(d["b"]),
                     "difference": f"{d['delta']:+.2f} [{d['low']:+.2f}, {d['high']:+.2f}]",
                     "verdict": d["verdict"]})
    return pd.DataFrame(rows)


def measured_on(note: str | None) -> str:
    """What a run measured on, from its note: the corpus' judgements, a learning job's
    held-out set, or benchmark files. Runs on different sets are never one line.

    Example:
        >>> measured_on("held-out judgements, learning job 7")
        'held-out set of learning job 7'
        >>> measured_on("judgements"), measured_on(""), measured_on(None)
        ('judgements', 'judgements', 'judgements')
        >>> measured_on("all judgements, adaptation job 3")
        'judgements'
    """
    note = note or ""
    if note.startswith("held-out judgements, learning job "):
        return "held-out set of learning job " + note.rsplit(" ", 1)[-1]
    if note.startswith("benchmark files"):
        return note
    return "judgements"


def history_figure(runs: list[dict]) -> go.Figure:
    """Each model's primary metrics over time, with their intervals as error bars.

    ``runs``: ``{"model", "created_at", "metrics"}`` (evaluation runs, oldest first).
    """
    fig = go.Figure()
    series: dict[tuple[str, str], list[tuple]] = {}
    for run in runs:
        for label, est in primary_values(run["metrics"]).items():
            series.setdefault((run["model"], label), []).append((run["created_at"], est))
    for (model, label), points in series.items():
        fig.add_trace(go.Scatter(
            x=[t for t, _ in points], y=[e["value"] for _, e in points],
            error_y={"type": "data", "symmetric": False,
                     "array": [e["high"] - e["value"] for _, e in points],
                     "arrayminus": [e["value"] - e["low"] for _, e in points]},
            mode="lines+markers", name=f"{model} · {label}"))
    fig.update_layout(yaxis={"title": "×100 (95% interval)"}, xaxis={"title": "evaluated"},
                      legend={"orientation": "h", "y": 1.15}, height=360,
                      margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return fig
