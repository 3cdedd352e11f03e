"""Passages of a document read from a file: planned part by part (none spans two pages or
sections) and encoded with their heading path first, so a passage from the middle of a
section still says what it is about. A recording encoder shows what is encoded."""

from __future__ import annotations

import threading

import numpy as np

from searchapp.embedding.passages import embed_documents, plan
from searchapp.intake.formats.document import Extracted, Part


class Recorder:
    """What ``embed_documents`` needs of an encoder; keeps every text it is asked to encode."""

    max_seq_length = 256
    inference_lock = threading.Lock()

    def __init__(self):
        self.seen: list[str] = []

    def encode(self, texts, checkpoint=None):
        self.seen += list(texts)
        rng = np.random.default_rng(len(self.seen))
        vectors = rng.normal(size=(len(texts), 8)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def a_manual() -> Extracted:
    return Extracted([Part("Run the dump with pg_dump.", section="Backups > SQL Dump"),
                      Part("Feed the file to psql.", section="Backups > Restoring the Dump"),
                      Part("Page two text.", page=2)])


def test_each_part_is_its_own_passage_encoded_after_its_heading_path():
    doc, encoder = a_manual(), Recorder()
    out = embed_documents(encoder, [doc.text, "a plain row"], layouts=[doc.layout, None])
    assert encoder.seen == ["Backups > SQL Dump\nRun the dump with pg_dump.",
                            "Backups > Restoring the Dump\nFeed the file to psql.",
                            "Page two text.", "a plain row"]
    _vectors, spans = out.passages[0]
    assert [doc.text[a:b] for a, b in spans] == [p.text for p in doc.parts]
    assert out.vectors.shape == (2, 8) and list(out.passages) == [0]


def test_a_passage_that_starts_with_its_heading_is_not_given_it_twice():
    doc = Extracted([Part("Restoring the Dump\nFeed the file to psql.",
                          section="Backups > Restoring the Dump"), Part("Other.", page=2)])
    encoder = Recorder()
    embed_documents(encoder, [doc.text], layouts=[doc.layout])
    assert encoder.seen[0] == "Restoring the Dump\nFeed the file to psql."


def test_without_a_layout_a_short_text_is_one_passage_as_before():
    [p] = plan(Recorder(), ["Short text. Two sentences."])
    assert p.spans == [(0, 26)] and p.heads is None and not p.split
