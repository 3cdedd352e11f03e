"""Corpora service: files read into documents, corpora created, embedded, deleted.

- ``ingest``: a CSV/TSV/JSONL/JSON/TXT/Parquet file (also gzipped) read into a ``Table``.
- ``service``: upload (one transaction, then the embed job), delete, status, re-embedding.
- ``csv_safe``: CSV written so that a spreadsheet never runs a cell as a formula.

Example:
    >>> from searchapp.corpora.ingest import read_table                 # doctest: +SKIP
    >>> from searchapp.corpora.service import upload                    # doctest: +SKIP
    >>> upload(app, read_table("faq.csv"), "faq").describe()            # doctest: +SKIP
    "Corpus 'faq': 13 added."
"""
