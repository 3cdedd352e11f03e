"""How many documents an embed commits at a time: the sizes every way of embedding shares.

The embed job (``embed_job``), the embedding that runs alongside an ingest
(``embed_alongside``) and the Ray actors (``ray_embed``) all commit in batches of
these sizes, so a crash loses at most one batch and a rate shows early.

Example:
    >>> FIRST_BATCH < BATCH_CPU < BATCH_GPU
    True
"""

from __future__ import annotations

BATCH_CPU = 1024  # documents per committed batch (and per Ray block, ``ray_embed``)
BATCH_GPU = 8192
BATCH_CHARS_CPU = 1_000_000  # characters of text per batch, at most (one longer document
BATCH_CHARS_GPU = 8_000_000  # is a batch of its own); ``"batch_chars"`` in the payload sets another
FIRST_BATCH = 128  # the first batches are smaller (doubling up): search opens and a rate
# shows within seconds of the model being loaded
