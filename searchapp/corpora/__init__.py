"""Corpora: a corpus' life once its documents are in (getting them in is ``searchapp.intake``).

- ``service``: a corpus' name checked, created, its status, the embed job requested (again
  with another model, on Ray), its long documents split, deleted.
- ``embed_job`` (the ``embed`` job; ``job_kinds``, ``job_payloads``), ``embed_alongside``
  (embedding while an ingest still reads), ``ray_embed`` (on a Ray cluster), with the batch
  sizes all three share (``embed_batches``).
- ``documents``: single documents by id upserted, read and deleted.
- ``names``: the one rule for document ids and for names from inside files and uploads.
- ``originals``: each original file kept once per SHA-256.
- ``csv_safe``: CSV written so that a spreadsheet never runs a cell as a formula.

Example:
    >>> from searchapp.intake.ingest import read_table                  # doctest: +SKIP
    >>> from searchapp.intake.table_upload import upload                # doctest: +SKIP
    >>> upload(app, read_table("faq.csv"), "faq").describe()            # doctest: +SKIP
    "Corpus 'faq': 13 added."
"""
