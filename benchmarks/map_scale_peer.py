"""The peer of benchmarks/map_scale.py: a bare Streamlit page drawing every document.

The plain way to show an embedding map with plotly: one WebGL scatter of all
the stored result's points, coloured by cluster (a continuous colour scale),
the document id on hover, no sampling, no labels, no aggregate. It reads the
same stored clusters result as the Clusters page (``stored_for_name``).

Run by map_scale.py (``streamlit run benchmarks/map_scale_peer.py``) with
MAP_CORPUS set; not a page of the app.
"""

import os

import plotly.graph_objects as go
import streamlit as st

from searchapp.clusters import ClusterParams, stored_for_name
from searchapp.context import App


@st.cache_resource
def app() -> App:
    return App()


st.title("Peer map")
result = stored_for_name(app(), os.environ["MAP_CORPUS"], ClusterParams())
fig = go.Figure(go.Scattergl(
    x=result.x, y=result.y, mode="markers", text=[str(i) for i in result.doc_ids],
    marker={"size": 4, "color": result.cluster, "colorscale": "Turbo", "opacity": 0.8}))
fig.update_layout(height=640, xaxis={"visible": False}, yaxis={"visible": False},
                  plot_bgcolor="white", margin={"l": 10, "r": 10, "t": 10, "b": 10})
st.plotly_chart(fig, key="peer.map", on_select="rerun", selection_mode=("points", "lasso"))
st.caption(f"{result.size:,} documents drawn.")
