"""Which vectors a search reads: this process' own index of the corpus (``local``, the
default) or the corpus' shard servers on the Ray cluster (``ray``), by
SEARCHAPP_SEARCH_ENGINE. The one switch the CLI, the API and the pages go through
(``search.service.as_handle``).

Example (with SEARCHAPP_SEARCH_ENGINE=ray):
    >>> handle = open_for_search(app, "docs")       # doctest: +SKIP
    >>> handle.shards is not None                    # doctest: +SKIP
    True
"""

from __future__ import annotations

from searchapp.context import App
from searchapp.vectors.handle import CorpusHandle, open_corpus, served_elsewhere


def open_for_search(app: App, corpus: str | CorpusHandle) -> CorpusHandle:
    """The corpus ready to search on the configured engine (a handle is used as it is)."""
    if isinstance(corpus, CorpusHandle):
        return corpus
    if app.settings.search_engine != "ray":
        return open_corpus(app, corpus)
    from searchapp.search.shards.ray_shards import ShardsNotServedError, client_for

    def shards_of(corpus_id: int, model_id: int):
        client = client_for(app, corpus_id, model_id)
        if client is None:
            raise ShardsNotServedError(corpus)
        return client

    return served_elsewhere(app, corpus, shards_of)
