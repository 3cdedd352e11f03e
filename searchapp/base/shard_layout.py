"""The choices of a sharded corpus' layout, named once for every layer that offers or checks
them: how a shard keeps its vectors (``search.shards.compressed``) and how documents are
placed in shards (``store.shard_rows``). Light on purpose: the CLI's parser offers them.

Example:
    >>> COMPRESSIONS, PLACEMENTS
    (('float32', 'sq8', 'pq'), ('hash', 'range'))
"""

COMPRESSIONS = ("float32", "sq8", "pq")
PLACEMENTS = ("hash", "range")
