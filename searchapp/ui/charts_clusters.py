"""Plotly figures for the Clusters page, drawn as an atlas (pure functions, no streamlit).

The map colours every cluster (``colour``: hues spread by the golden angle,
three lightness levels, so neighbouring ids never look alike), writes the
names of the clusters on the map where they fit (``place_labels``: biggest
first, none overlapping at the full view; text keeps its size when zooming,
so labels spread apart and stay readable), and draws outliers light grey.
The points are two WebGL traces (clustered, outliers) whatever the number of
clusters, so a 500-cluster map builds as fast as a 5-cluster one; a third
ringed trace marks search hits and chosen documents. Behind a sample, an
aggregate image (``density_image``) shows every document: each cell of a
grid coloured by its commonest cluster, stronger where more documents lie.

Plotly reads a subset of HTML in names, labels and hovers, and those come from
documents: all of them are escaped.

Example:
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"id": ["a", "b"], "cluster": [0, -1], "label": ["dog", "outlier"],
    ...                       "x": [0.0, 1.0], "y": [1.0, 0.0], "text": ["A dog.", "Tax."],
    ...                       "highlight": [False, True]})
    >>> fig, rows = cluster_map(frame, {0: 1})
    >>> [t.name for t in fig.data], [r.tolist() for r in rows]
    (['clusters (1)', 'outliers (1)', 'cluster names', 'chosen'], [[0], [1], [], [1]])
"""

from __future__ import annotations

import base64
import colorsys
import io
from html import escape

import numpy as np
import plotly.graph_objects as go

from searchapp.base.bidi import FSI, PDI, RTL_LETTER, isolate_rtl

OUTLIER_COLOUR = "#c8c8c8"
HOVER = "%{text}<extra></extra>"
GOLDEN = 0.381966  # of a turn: consecutive ids land far apart on the colour wheel
LABEL_CHARS = 28  # a name on the map: its first terms, cut to this
MAX_LABELS = 60
MAP_HEIGHT = 640


def plain(text: object) -> str:
    """User text for a plotly label or legend entry: ``&``, ``<`` and ``>`` escaped
    (plotly reads a subset of HTML there, and labels come from documents).

    Example:
        >>> plain("<b>tax</b> & fees")
        '&lt;b&gt;tax&lt;/b&gt; &amp; fees'
    """
    return escape(str(text), quote=False)


def colour(cluster_id: int) -> str:
    """A colour per cluster id, told apart from its neighbours; outliers (-1) light grey.

    Example:
        >>> colour(-1), colour(0), colour(1) != colour(0), colour(300) != colour(0)
        ('#c8c8c8', '#d92626', True, True)
    """
    if cluster_id < 0:
        return OUTLIER_COLOUR
    hue = (cluster_id * GOLDEN) % 1.0
    lightness = (0.5, 0.36, 0.64)[(cluster_id // 7) % 3]
    saturation = (0.7, 0.85, 0.55)[(cluster_id // 21) % 3]
    r, g, b = colorsys.hls_to_rgb(hue, lightness, saturation)
    return f"#{round(r * 255):02x}{round(g * 255):02x}{round(b * 255):02x}"


def stepped_scale(n: int) -> list[list]:
    """A plotly colour scale giving cluster ids 0..n-1 (with cmin -0.5, cmax n-0.5) their
    ``colour``: two stops per id, so every value within an id's step gets its colour.

    Example:
        >>> stepped_scale(2)
        [[0.0, '#d92626'], [0.5, '#d92626'], [0.5, '#26d95a'], [1.0, '#26d95a']]
    """
    out = []
    for i in range(max(n, 1)):
        out += [[i / max(n, 1), colour(i)], [(i + 1) / max(n, 1), colour(i)]]
    return out


def short_label(label: str, limit: int = LABEL_CHARS) -> str:
    """A cluster's name as written on the map, within ``limit`` characters: a name of
    words cut at a word, with "…"; a list of terms (a name given before) to its first terms.

    Example:
        >>> short_label("guitar, playing, man, piano, music")
        'guitar, playing, man'
        >>> short_label("Configuring the Server Settings Well")
        'Configuring the Server…'
    """
    if ", " not in str(label) and len(str(label)) > limit:
        words = str(label)[:limit].rsplit(" ", 1)[0]
        return f"{words.rstrip(' ,:;-')}…"
    out = ""
    for term in str(label).split(", "):
        candidate = f"{out}, {term}" if out else term
        if len(candidate) > limit or candidate.count(",") >= 3:
            break
        out = candidate
    return out or str(label)[:limit]


def place_labels(centres: np.ndarray, names: list[str], extent: tuple[float, float],
                 width_px: int = 1100, height_px: int = MAP_HEIGHT,
                 limit: int = MAX_LABELS) -> list[int]:
    """Which clusters get their name on the map: in the given order (biggest first), each
    kept when its text box, at the full view, overlaps none kept before; at most ``limit``.

    ``centres`` is (n, 2) in map units; ``extent`` the map's width and height in
    those units; boxes are estimated at 7.5 px per character and 18 px per line.

    Example:
        >>> place_labels(np.array([[0, 0], [0.01, 0], [5, 5]]), ["a", "b", "c"], (10, 10))
        [0, 2]
    """
    sx, sy = width_px / max(extent[0], 1e-9), height_px / max(extent[1], 1e-9)
    kept: list[int] = []
    boxes: list[tuple[float, float, float, float]] = []
    for i, ((x, y), name) in enumerate(zip(centres, names, strict=True)):
        w, h = 7.5 * len(name) + 10, 18
        box = (x * sx - w / 2, y * sy - h / 2, x * sx + w / 2, y * sy + h / 2)
        if all(box[2] < b[0] or box[0] > b[2] or box[3] < b[1] or box[1] > b[3]
               for b in boxes):
            kept.append(i)
            boxes.append(box)
            if len(kept) >= limit:
                break
    return kept


def hover_texts(part) -> np.ndarray:
    """One hover string per point: id, cluster label and text, escaped (user text, not markup).

    One string column built with vectorised string operations, not a (n, 3)
    ``customdata`` table: plotly validates and copies that cell by cell, which
    took most of the page's time at 20,000 points.

    Example:
        >>> import pandas as pd
        >>> hover_texts(pd.DataFrame({"id": ["a"], "label": ["x"], "text": ["<b>hi</b>"]}))[0]
        '<b>a</b> · x<br>&lt;b&gt;hi&lt;/b&gt;'

    Each of the three that holds right-to-left letters is isolated (``base/bidi``): an
    Arabic text runs right to left in the hover, and the separators stay where they are.
    """
    def escaped(column):
        text = (column.astype(str).str.replace("&", "&amp;", regex=False)
                .str.replace("<", "&lt;", regex=False).str.replace(">", "&gt;", regex=False))
        return text.where(~text.str.contains(RTL_LETTER, regex=True), FSI + text + PDI)

    joined = "<b>" + escaped(part.id) + "</b> · " + escaped(part.label) + "<br>" + \
        escaped(part.text)
    return joined.to_numpy(dtype=object)


def cluster_map(frame, sizes: dict[int, int], title: str | None = None,
                density: dict | None = None) -> tuple[go.Figure, list[np.ndarray]]:
    """The atlas: (figure, for each trace the ``frame`` rows its points are, in order).

    ``frame`` has columns id, cluster, label, x, y, text, highlight (as from
    ``searchapp.clusters.map_frame``); ``sizes`` gives each cluster's full
    size (the frame may be a sample). ``density`` (from ``density_image``) is
    drawn under the points. The returned rows map a plotly selection
    (curve number, point index) back to documents.
    """
    fig = go.Figure()
    rows: list[np.ndarray] = []
    if density is not None:
        fig.add_layout_image(source=density["source"], xref="x", yref="y", x=density["x0"],
                             y=density["y1"], sizex=density["width"], sizey=density["height"],
                             sizing="stretch", layer="below", opacity=1.0)
    clustered = np.flatnonzero(frame.cluster.to_numpy() >= 0)
    outliers = np.flatnonzero(frame.cluster.to_numpy() < 0)
    n_clustered = sum(v for k, v in sizes.items() if k >= 0) or len(clustered)
    part = frame.iloc[clustered]
    ids = part.cluster.to_numpy()
    top = int(ids.max()) if len(ids) else 0
    # Colours by number through a stepped scale (one step per cluster id): plotly checks
    # a list of colour strings one by one (seconds at 20,000 points), numbers at once.
    fig.add_trace(_points(part, f"clusters ({n_clustered:,})", {
        "size": 5, "opacity": 0.8, "color": ids, "cmin": -0.5, "cmax": top + 0.5,
        "colorscale": stepped_scale(top + 1), "showscale": False}))
    rows.append(clustered)
    part = frame.iloc[outliers]
    fig.add_trace(_points(part, f"outliers ({sizes.get(-1, len(outliers)):,})",
                          {"size": 4, "color": OUTLIER_COLOUR, "opacity": 0.5}))
    rows.append(outliers)
    fig.add_trace(_labels(frame, sizes))
    rows.append(np.zeros(0, dtype=np.int64))
    chosen = np.flatnonzero(frame.highlight.to_numpy())
    part = frame.iloc[chosen]
    fig.add_trace(_points(part, "chosen", {
        "size": 14, "color": "rgba(0,0,0,0)", "line": {"width": 2.5, "color": "black"}}))
    rows.append(chosen)
    fig.update_layout(
        title=title, height=MAP_HEIGHT, dragmode="pan", hovermode="closest",
        margin={"l": 10, "r": 10, "t": 40 if title else 10, "b": 10},
        legend={"itemsizing": "constant", "orientation": "h", "y": 1.0, "yanchor": "bottom"},
        xaxis={"visible": False}, yaxis={"visible": False}, plot_bgcolor="white")
    return fig, rows


def _labels(frame, sizes: dict[int, int]) -> go.Scatter:
    """The cluster names at their clusters' centres (median of the drawn points)."""
    part = frame[frame.cluster >= 0]
    if not len(part):
        return go.Scatter(x=[], y=[], mode="text", name="cluster names")
    centres = part.groupby("cluster")[["x", "y"]].median()
    order = sorted(centres.index, key=lambda c: (-sizes.get(int(c), 0), int(c)))
    labels = part.groupby("cluster").label.first()
    names = [short_label(labels[c]) for c in order]
    xy = centres.loc[order].to_numpy()
    extent = (float(np.ptp(frame.x)) or 1.0, float(np.ptp(frame.y)) or 1.0)
    kept = place_labels(xy, names, extent)
    return go.Scatter(
        x=xy[kept, 0], y=xy[kept, 1], mode="text", name="cluster names", hoverinfo="skip",
        text=[isolate_rtl(plain(names[i])) for i in kept],
        textfont={"size": 12, "color": "#1f1f1f", "family": "sans-serif", "weight": 600,
                  "shadow": "0px 0px 3px white"})


def _points(part, name: str, marker: dict) -> go.Scattergl:
    return go.Scattergl(x=part.x.to_numpy(), y=part.y.to_numpy(), mode="markers", name=name,
                        marker=marker, text=hover_texts(part), hovertemplate=HOVER)


def density_image(x: np.ndarray, y: np.ndarray, cluster: np.ndarray, bins: int = 360
                  ) -> dict:
    """Every document as a picture: a grid of ``bins`` × ``bins`` cells, each in the colour
    of its commonest cluster (grey for outliers), more opaque where more documents lie.

    Returns {"source": a PNG data URI, "x0", "y1", "width", "height"} in map units,
    for ``cluster_map(density=...)``; the picture travels inside the page (no
    request). One sort of the n points: about a second at 1,000,000.

    Example:
        >>> d = density_image(np.array([0., 1.]), np.array([0., 1.]), np.array([0, -1]), 4)
        >>> d["source"].startswith("data:image/png;base64,"), d["width"] > 1
        (True, True)
    """
    from PIL import Image

    pad = 0.02
    x0, x1, y0, y1 = float(x.min()), float(x.max()), float(y.min()), float(y.max())
    w, h = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    x0, x1, y0, y1 = x0 - pad * w, x1 + pad * w, y0 - pad * h, y1 + pad * h
    col = np.clip(((x - x0) / (x1 - x0) * bins).astype(np.int64), 0, bins - 1)
    row = np.clip(((y1 - y) / (y1 - y0) * bins).astype(np.int64), 0, bins - 1)  # top row first
    cell = row * bins + col  # (n,)
    span = int(cluster.max()) + 2
    keys, counts = np.unique(cell * span + (cluster + 1), return_counts=True)
    cells, members = keys // span, keys % span - 1
    order = np.lexsort((-counts, cells))  # per cell, its commonest cluster first
    first = order[np.r_[True, cells[order][1:] != cells[order][:-1]]]
    totals = np.bincount(cell, minlength=bins * bins)
    rgba = np.zeros((bins * bins, 4), dtype=np.uint8)
    palette = {c: colour(int(c)) for c in np.unique(members[first])}
    for c, hexed in palette.items():
        where = cells[first][members[first] == c]
        rgba[where, :3] = [int(hexed[i:i + 2], 16) for i in (1, 3, 5)]
    filled = totals > 0
    strength = np.log1p(totals[filled]) / np.log1p(max(int(totals.max()), 1))
    rgba[filled, 3] = (60 + 150 * strength).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(rgba.reshape(bins, bins, 4), "RGBA").save(buffer, "PNG", optimize=True)
    return {"source": "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode(),
            "x0": x0, "y1": y1, "width": x1 - x0, "height": y1 - y0}


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


def standalone_html(fig: go.Figure, title: str) -> str:
    """The map as one HTML file a colleague opens offline: plotly.js inside it, no CDN.

    (plotly.js names a CDN once, as the default source of geographic outlines,
    which a scatter map never loads.)

    Example:
        >>> html = standalone_html(go.Figure(), "map")
        >>> '<script src="http' in html, len(html) > 1_000_000
        (False, True)
    """
    return fig.to_html(include_plotlyjs=True, full_html=True, config={"scrollZoom": True},
                       default_width="100%", default_height="95vh").replace(
        "<head>", f"<head><title>{plain(title)}</title>", 1)
