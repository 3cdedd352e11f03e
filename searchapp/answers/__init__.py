"""Answers: the sentences of a corpus' own documents that answer a query, above the hits.

Extracted, never generated: ``finder`` scores the stored sentences of a search's top
passages, ``threshold`` decides when none is clear enough, ``questions`` when a query asks
for one, ``service`` puts them together for the pages, the CLI and the API.
"""
