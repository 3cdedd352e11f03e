"""Corpora service: files read into documents, corpora created, embedded, deleted.

- ``ingest``: a CSV/TSV/JSONL/JSON/TXT/Parquet file (also gzipped) opened as a ``Table``
  (``table``): ``source`` reads the bytes a piece at a time, ``formats`` has a reader per
  format, every cell the text the file wrote (``cells``: also the one size check).
- ``builder``: rows into checked documents, a batch at a time (``seen_ids``: repeats).
- ``service``: upload (streamed into one transaction, then the embed job), delete, status,
  re-embedding.
- ``csv_safe``: CSV written so that a spreadsheet never runs a cell as a formula.

Example:
    >>> from searchapp.corpora.ingest import read_table                 # doctest: +SKIP
    >>> from searchapp.corpora.service import upload                    # doctest: +SKIP
    >>> upload(app, read_table("faq.csv"), "faq").describe()            # doctest: +SKIP
    "Corpus 'faq': 13 added."
"""
