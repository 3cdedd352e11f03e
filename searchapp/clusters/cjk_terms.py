"""The words of Chinese and Japanese text for naming clusters: no spaces to split them at.

``\\w+`` reads a whole Japanese sentence as one "word", so a Japanese cluster was named by
sentences. Here a run of these scripts is cut into the units a reader sees:

- Japanese (a text holding any kana): runs of kanji and runs of katakana of two characters
  or more, cut where the script changes ("データベース", "復元"); hiragana, which writes the
  particles and the endings of verbs ("の", "を", "します"), is dropped, and so are the
  commonest function nouns (``JAPANESE_STOP``).
- Chinese (Han characters and no kana): the overlapping character pairs of each run
  ("数据库" → "数据", "据库"), the method of CJK search engines without a dictionary; a
  pair holding a particle (的, 了, 是...) or one of the commonest function words
  (``CHINESE_STOP``) is dropped.

Example:
    >>> cjk_units("バックアップを作成し、データベースを復元します", japanese=True)
    ['バックアップ', '作成', 'データベース', '復元']
    >>> cjk_units("备份数据库", japanese=False)
    ['备份', '份数', '数据', '据库']
"""

from __future__ import annotations

import re
from itertools import pairwise

HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3005"  # with 々, the repeat mark
KATAKANA = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f"  # with ー, not ・
HIRAGANA = "\u3041-\u309f"
CJK_RUN = re.compile(f"[{HAN}{KATAKANA}{HIRAGANA}]+")
KANA = re.compile(f"[{HIRAGANA}{KATAKANA}]")
_JAPANESE_UNIT = re.compile(f"[{HAN}]{{2,}}|[{KATAKANA}]{{2,}}")
_HAN_RUN = re.compile(f"[{HAN}]{{2,}}")
_JAPANESE_STOP = ("場合 以下 以上 必要 可能 全て 一部 自分 今回 注意 通常 特別 方法 本当 "
                  "最初 最後 次第 同様")
JAPANESE_STOP = frozenset(_JAPANESE_STOP.split(" "))
PARTICLES = frozenset("的了是在和与或也都就而及之其这那个么吗呢吧着过把被从对为以")
_CHINESE_STOP = ("我们 你们 他们 她们 它们 可以 什么 没有 一个 因为 所以 如果 但是 就是 已经 还是 "
                 "自己 这些 那些 时候 怎么 现在 以及 进行 可能 需要 使用 通过 如何 非常 一些 然后")
CHINESE_STOP = frozenset(_CHINESE_STOP.split(" "))


def is_japanese(text: str) -> bool:
    """Whether ``text`` is Japanese rather than Chinese: it holds kana.

    Example:
        >>> is_japanese("東京は大きい"), is_japanese("东京很大")
        (True, False)
    """
    return KANA.search(text) is not None


def japanese_phrases(run: str) -> list[str]:
    """Two Japanese words side by side, or joined by の ("of"), as a phrase of two words
    (written with a space, as every phrase is): "データベースのバックアップ" gives
    "データベース バックアップ". A noun and the noun it qualifies, the closest Japanese
    comes to "database backup"; any other particle between two words joins none.

    Example:
        >>> japanese_phrases("データベースのバックアップとサーバー設定")
        ['データベース バックアップ', 'サーバー 設定']
    """
    found = [m for m in _JAPANESE_UNIT.finditer(run) if m.group() not in JAPANESE_STOP]
    return [f"{a.group()} {b.group()}" for a, b in pairwise(found)
            if run[a.end():b.start()] in ("", "の")]


def cjk_units(run: str, japanese: bool) -> list[str]:
    """The naming units of a run of Chinese or Japanese characters (see the module).

    Example:
        >>> cjk_units("場合は設定ファイルを読む", japanese=True)
        ['設定', 'ファイル']
        >>> cjk_units("我们的数据", japanese=False)
        ['数据']
    """
    if japanese:
        return [u for u in _JAPANESE_UNIT.findall(run) if u not in JAPANESE_STOP]
    pairs = [h[i:i + 2] for h in _HAN_RUN.findall(run) for i in range(len(h) - 1)]
    return [p for p in pairs if not (PARTICLES & set(p)) and p not in CHINESE_STOP]
