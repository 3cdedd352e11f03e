"""Issue 48, item 2: clusters named in their documents' languages.

Japanese is named by its words (runs of kanji or katakana), not by sentences; Chinese by
character pairs; German, French, Spanish... without their stop words; English exactly as
before (an English text never takes another language's list: "die", "war", "man" stay).
Real components: the clustering job on SQLite, with planted vectors (no encoder).
"""

from __future__ import annotations

import glob
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from searchapp.clusters import ClusterParams, compute_and_store
from searchapp.clusters.cjk_terms import CJK_RUN, HIRAGANA
from searchapp.clusters.naming import _stop_words, ctfidf_terms, term_counts, terms_of
from searchapp.clusters.stopwords import STOP_WORDS, language_of, stop_words_of
from tests.test_clusters import make_corpus, planted

GERMAN_BACKUP = [
    "Die Sicherung der Datenbank wird jede Nacht erstellt und auf dem Server abgelegt.",
    "Eine Sicherung kann mit pg_dump erstellt werden, die Wiederherstellung mit psql.",
    "Wenn die Sicherung fehlschlägt, wird der Verwalter per Nachricht benachrichtigt.",
    "Vor der Wiederherstellung muss die alte Datenbank gelöscht werden.",
    "Die Wiederherstellung einer Sicherung dauert bei großen Datenbanken einige Stunden.",
]
GERMAN_NETWORK = [
    "Der Server ist über das Netzwerk erreichbar, wenn die Firewall den Port freigibt.",
    "Die Verbindung zum Netzwerk bricht ab, wenn der Router neu gestartet wird.",
    "Für eine sichere Verbindung wird ein Zertifikat auf dem Server benötigt.",
    "Das Netzwerk ist langsam, weil die Verbindung über einen Proxy läuft.",
    "Ein Router verbindet das lokale Netzwerk mit dem Internet und vergibt Adressen.",
]
JAPANESE_BACKUP = [
    "データベースのバックアップは毎晩作成され、サーバーに保存されます。",
    "バックアップは pg_dump で作成し、psql で復元します。",
    "バックアップが失敗した場合は、管理者にメッセージが送られます。",
    "復元の前に、古いデータベースを削除しなければなりません。",
    "大きなデータベースのバックアップの復元には数時間かかります。",
]
JAPANESE_NETWORK = [
    "ファイアウォールがポートを開けると、サーバーにネットワーク経由で接続できます。",
    "ルーターを再起動すると、ネットワークの接続が切れます。",
    "安全な接続には、サーバーの証明書が必要です。",
    "接続がプロキシを経由するので、ネットワークが遅くなります。",
    "ルーターはローカルネットワークをインターネットに接続します。",
]
CHINESE_BACKUP = ["数据库的备份每天晚上自动创建。", "备份失败时，管理员会收到通知。",
                  "恢复备份之前，需要删除旧的数据库。", "大型数据库的备份恢复需要几个小时。"]
CHINESE_NETWORK = ["防火墙打开端口后，可以通过网络连接服务器。", "路由器重启时，网络连接会中断。",
                   "安全连接需要服务器证书。", "网络连接很慢，因为要经过代理服务器。"]
HIRAGANA_CHAR = re.compile(f"[{HIRAGANA}]")


def topics(*groups: list[str], size: int = 25) -> tuple[np.ndarray, list[str]]:
    """Planted vectors, one cluster per group, its texts cycling through the group."""
    vectors, _, _ = planted(sizes=tuple(size for _ in groups), n_outliers=0)
    return vectors, [group[i % len(group)] for group in groups for i in range(size)]


# ---- the job -------------------------------------------------------------------------------
def test_german_and_japanese_clusters_are_named_by_their_own_words(app):
    vectors, texts = topics(GERMAN_BACKUP, GERMAN_NETWORK, JAPANESE_BACKUP, JAPANESE_NETWORK)
    make_corpus(app, "mixed", texts, vectors)
    result = compute_and_store(app, "mixed", ClusterParams("kmeans", k=4, projection="pca"))
    german = STOP_WORDS["de"]
    named = {c["label"]: c for c in result.clusters}
    assert len(named) == 4, list(named)
    for label, cluster in named.items():
        terms = cluster["terms"][:6]
        assert not german & set(terms), (label, terms)  # no "der", "die", "und"
        assert not any(HIRAGANA_CHAR.search(t) for t in terms), (label, terms)
        assert all(len(w) <= 8 for t in terms if CJK_RUN.search(t) for w in t.split()), terms
        assert not german & set(label.lower().split()), label
        assert not HIRAGANA_CHAR.search(label) and len(label) <= 30, label  # no sentence
    terms = {t for c in named.values() for t in c["terms"][:4]}
    assert {"sicherung", "netzwerk", "バックアップ", "ネットワーク"} <= terms, terms
    assert {"データベース バックアップ", "ネットワーク 接続"} <= set(named), list(named)


# ---- the terms -----------------------------------------------------------------------------
def test_chinese_clusters_are_named_by_character_pairs():
    texts = CHINESE_BACKUP * 5 + CHINESE_NETWORK * 5
    got = ctfidf_terms(texts, np.array([0] * 20 + [1] * 20), top_n=3)
    assert "备份" in got[0] and {"网络", "连接"} & set(got[1]), got
    assert all(len(t) == 2 for terms in got.values() for t in terms), got


def test_a_japanese_title_is_cut_to_a_short_name():
    from searchapp.clusters.names import title_of

    assert title_of("", JAPANESE_BACKUP[0]) == "データベースのバックアップは…"
    assert title_of("", "How far is it from Denver to Aspen ?") == "How far is it from Denver…"


def test_japanese_terms_are_kanji_and_katakana_words():
    assert terms_of("バックアップは pg_dump で作成し、psql で復元します。") == [
        "バックアップ", "作成", "psql", "復元"]
    _counts, terms = term_counts(JAPANESE_BACKUP)
    assert not [t for t in terms if HIRAGANA_CHAR.search(t)
                or any(len(w) > 12 for w in t.split())], terms.tolist()


def test_each_language_loses_its_stop_words():
    for text, code in [(GERMAN_BACKUP[0], "de"),
                       ("La sauvegarde de la base est faite chaque nuit et elle est copiée "
                        "sur le serveur.", "fr"),
                       ("La copia de seguridad de la base se crea cada noche y se guarda en "
                        "el servidor.", "es")]:
        assert language_of(text) == code
        words = terms_of(text, stop_words_of(text, _stop_words()))
        assert not STOP_WORDS[code] & set(words), (code, words)


ENGLISH_WORDS = [*sorted(ENGLISH_STOP_WORDS)[::5],
                 "die", "war", "man", "son", "once", "pour", "hat", "gift", "also", "will", "des",
                 "las", "server", "backup", "database", "card", "credit", "river", "bank", "dog",
                 "beach"]
GIT_PAGES = sorted(glob.glob("/usr/share/doc/git-doc/git-*.html"))
SAMPLE = Path(__file__).resolve().parents[1] / "searchapp" / "sample" / "captions.csv.gz"


def english_terms(texts: list[str]) -> list[str]:
    """The terms as the English-only naming made them (the analyzer before issue 48)."""
    from sklearn.feature_extraction.text import CountVectorizer

    stop = _stop_words()
    vectorizer = CountVectorizer(analyzer=lambda text: terms_of(text, stop), binary=True)
    return vectorizer.fit(texts).get_feature_names_out().tolist()


@pytest.mark.skipif(not GIT_PAGES, reason="git-doc's HTML manual is not installed")
def test_real_english_texts_get_the_same_terms_as_before():
    from searchapp.intake.formats.html import read_html

    pages = [d.text for path in GIT_PAGES[::4][:40] for d in read_html(path, Path(path).name)]
    captions = pd.read_csv(SAMPLE).text.astype(str).tolist()[:2000]
    for texts in (pages, captions):
        assert [t for t in texts if language_of(t) is not None] == []
        _, terms = term_counts(texts)
        before = english_terms(texts)
        assert [t for t in terms.tolist() if " " not in t] == [t for t in before if " " not in t]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(ENGLISH_WORDS), min_size=1, max_size=60))
def test_a_text_with_more_english_stop_words_keeps_the_english_list(words):
    """Words that are other languages' stop words too ("die", "war", "son", "once") take no
    other list while English stop words are at least as many."""
    text = " ".join(words)
    english = sum(w in ENGLISH_STOP_WORDS for w in words)
    if all(english >= sum(w in stop - ENGLISH_STOP_WORDS for w in words)
           for stop in STOP_WORDS.values()):
        assert stop_words_of(text, _stop_words()) == _stop_words(), language_of(text)
