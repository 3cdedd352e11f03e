"""Getting input in: every way a document enters a corpus, and the one record of each format.

- ``formats``: one ``Format`` record per input format (``formats/registry``) and the readers;
  ``routing``: which path an input takes (one table file: the table path; else the files path).
- The files path: ``inputs`` (paths into checked input files, archives unpacked member by
  member), ``extract_pool`` and ``extract`` (a file read into documents in a process of its
  own), ``staging`` (uploads kept for the job), ``folder_check`` (a watched folder is still the
  one added), ``files_job`` (the ``ingest`` job; ``job_kinds``, ``job_payloads``).
- The table path: ``ingest`` (a file opened as a ``Table``: ``source``, ``table``), ``builder``,
  ``cells``, ``columns``, ``seen_ids``, and ``table_upload`` (stored in one transaction).

The corpus these land in, its embedding and its lifecycle are ``searchapp.corpora``.
"""
