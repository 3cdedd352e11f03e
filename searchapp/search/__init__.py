"""Search service: a query against a corpus, by meaning, by words or both.

- ``service``: ``search()`` and its modes (semantic, lexical, hybrid fusion), k and filters.
- ``filters``: ``--where COL OP VALUE`` conditions parsed and turned into bound SQL.
- ``snippets``: the matched passage cut around the query's words, marked.

Example:
    >>> from searchapp.search.service import search              # doctest: +SKIP
    >>> search(app, "faq", "reset my password", k=3)[0].id      # doctest: +SKIP
    'p1'
"""
