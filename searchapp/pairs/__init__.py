"""When two texts count as the same, shared by duplicates and judgements (below both).

- ``text_keys``: the normalised text exact duplicates are compared on, as a 64-bit key.
- ``threshold``: a model's duplicate threshold, calibrated or its default.
"""
