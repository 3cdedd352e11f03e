"""Judgements: what a person says search results and duplicate pairs are, per corpus.

- ``items``: the kinds (query → document, document pair), sources, label ranges.
- ``service``: add (replacing an earlier label), remove (undo), list, count,
  import and export as CSV; evaluation runs measured on them, over time.
- ``csv_io``: the CSV files, read all or nothing and written spreadsheet-safe.
- ``proposals``: which to ask next (pairs near the threshold, rankings that disagree,
  neighbours across a cluster border), mixed, never an item already judged.
- ``estimate``: the running estimate (pair precision at the threshold, precision@10).
- ``groups``: groups confirmed by duplicate judgements, each with its canonical member.

Example:
    >>> from searchapp.judgements import service
    >>> service.add(app, "faq", a="q1", b="q2", label=1, source="cli").kind  # doctest: +SKIP
    'pair'
"""
