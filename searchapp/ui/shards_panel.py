"""The Jobs page's "Shards on the Ray cluster" section: each corpus' shard servers, one row a
replica (size, generation, memory, how fresh, node), where SEARCHAPP_SEARCH_ENGINE=ray.

What it shows is ``searchapp shards status`` (``search.shards.ray_shards.status``); a
replica that is down says so, with the reason Ray gave.

Example (inside a page script):
    >>> shards_section(app)                                          # doctest: +SKIP
"""

from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.ui.common import corpus_summaries, md_escape


def replica_rows(rows: list[dict]) -> pd.DataFrame:
    """The status of a corpus' replicas as the table the page shows.

    Example:
        >>> replica_rows([{"number": 0, "shards": 2, "replica": 0, "down": "ActorDiedError"}]
        ...              ).iloc[0]["state"]
        'down (ActorDiedError)'
    """
    out = []
    for r in rows:
        fresh = time.time() - r["caught_up_at"] if r.get("caught_up_at") else None
        out.append({"shard": f"{r['number'] + 1} of {r['shards']}", "replica": r["replica"],
                    "state": f"down ({r['down']})" if "down" in r else "serving",
                    "documents": r.get("documents"), "passages": r.get("passages"),
                    "generation": r.get("generation"),
                    "memory (MB)": round(r["memory_bytes"] / 2**20, 1)
                    if "memory_bytes" in r else None,
                    "full text (MB)": round(r["words_bytes"] / 2**20, 1)
                    if r.get("words") is not None else None,
                    "caught up (s ago)": None if fresh is None else round(max(fresh, 0.0), 1),
                    "node": r.get("node"), "ray node": r.get("ray_node"),
                    "compression": r.get("compression")})
    return pd.DataFrame(out)


def shards_section(app: App) -> None:
    """The section, only where searches go to shard servers."""
    if app.settings.search_engine != "ray":
        return
    from searchapp.search.shards.ray_shards import status as replicas_of

    with st.expander(f"Shards on the Ray cluster ({md_escape(app.settings.ray_address)})"
                     if app.settings.ray_address else "Shards on the Ray cluster",
                     expanded=True):
        for corpus in corpus_summaries(app):
            try:
                rows = replicas_of(app, corpus.name)
            except SearchAppError as exc:
                st.error(md_escape(str(exc)))
                return
            st.markdown(f"**{md_escape(corpus.name)}**")
            if not rows:
                st.caption(f"Not served: `searchapp shards serve --corpus "
                           f"{md_escape(corpus.name)} --shards N`.")
                continue
            st.dataframe(replica_rows(rows), hide_index=True)
