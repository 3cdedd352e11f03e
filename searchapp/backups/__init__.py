"""Backups that restore: a consistent archive of the database and the fine-tuned models.

``service``: ``backup`` (the CLI's ``searchapp backup``, the ``backup`` job the API
starts with ``request_backup``), ``restore`` into a data folder after checking
every member, and the snapshots kept in ``DATA_DIR/backups``. The archive format
and the database copy are the store's (``store/archive.py``, ``store/snapshot.py``),
because a schema upgrade writes the same kind of archive before it changes a file.
"""
