"""Stop words of the languages other than English, and which of them a text is written in.

A German cluster is not "der, die, und" nor a French one "les, des, est". English keeps
scikit-learn's list (``naming._stop_words``); a document whose words are more those of one
of the languages below than English ones (``language_of``: at least ``MIN_HITS`` of its
first ``PROBE`` words on that language's list and not on the English one, and more than
on the English one) also
loses that language's stop words. Only such a document does: "die", "war", "man", "son",
"once" or "pour" are English words too, so an English text is named as before.

The lists are the function words of each language (articles, pronouns, prepositions,
conjunctions, auxiliaries and the commonest adverbs), written for this module: facts of the
languages, no third party's list (no licence to carry, no dependency). Frequency within a
small corpus would not do instead: there a topic's own word is in most documents too.
Chinese and Japanese are not here: their words are not split by spaces (``cjk_terms``).

Example:
    >>> language_of("Die Datei wird gelesen, bevor der Index neu erstellt wird und fertig ist.")
    'de'
    >>> language_of("The file is read before the index is rebuilt.") is None
    True
"""

from __future__ import annotations

import re
from functools import lru_cache

PROBE = 200  # words read to tell the language
MIN_HITS = 3

_LISTS = {
    "de": """ab aber alle allem allen aller alles als also am an andere anderen auch auf aus bei
        beim bin bis bist da dabei damit dann das dass dem den denen denn der des dessen dich
        die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen
        einer eines er es etwa etwas euch euer für gegen gibt hab habe haben hat hatte hätte
        ich ihm ihn ihnen ihr ihre ihrem ihren ihrer im in ins ist ja jede jedem jeden jeder
        jedes jetzt kann kein keine keinen können könnte man manche mehr mein meine mit muss
        müssen nach nicht nichts noch nun nur ob oder ohne sehr sein seine seinem seinen
        seiner sich sie sind so soll sollte sondern sowie über um und uns unser unter vom von
        vor war waren warum was weil welche welchem welchen welcher wenn wer werden wie wieder
        wir wird wirklich wo wurde wurden zu zum zur zwar zwischen""",
    "fr": """à ai aie ainsi alors au aucun aussi autre aux avec avoir avons ayant bien ça ce
        ceci cela celle celles celui ces cet cette chaque ci comme comment dans de des donc dont
        du elle elles en encore entre est et été être eu eux fait faire fois font ici il ils je
        jusqu la là le les leur leurs lors lui ma mais me même mes moi moins mon ne ni nos notre
        nous on ont ou où par parce pas peu peut plus pour pourquoi qu quand que quel quelle
        quelles quels qui sa sans se sera ses si sien son sont sous sur ta te tes toi ton tous
        tout toute toutes très tu un une vers via vos votre vous""",
    "es": """a al algo algunas algunos ante antes aquí así aun aunque bajo bien cada como con
        contra cual cuales cuando de del desde donde dos el él ella ellas ellos en entre era
        eran es esa esas ese eso esos esta está están estar estas este esto estos fue fueron ha
        hace hacer han hasta hay la las le les lo los más me mi mientras mis muy nada ni no nos
        nosotros o otra otras otro otros para pero poco por porque puede pueden que qué quien
        se sea según ser si sí sin sino sobre son su sus también tan tanto te tiene tienen todo
        todos tu tú un una uno unos usted y ya yo""",
    "it": """a agli ai al alla alle allo anche ancora avere c che chi ci come con cosa da dal
        dalla dalle degli dei del della delle dello di dove e è ed era essere gli ha hanno ho i
        il in io la le lei lo loro lui ma mi mio molto ne nei nel nella nelle no noi non o per
        perché più può quale quando quella quelle quello questa queste questi questo se sei si
        sia siamo sono su sua sue sui sul sulla suo suoi tra tu tutti tutto un una uno vi voi""",
    "pt": """a ao aos aquela aquele as até com como da das de dela dele deles depois do dos e
        é ela elas ele eles em entre era essa esse esta está estão este eu foi for foram há
        isso isto já lhe mais mas me mesmo meu minha muito na não nas nem no nos nós o os ou
        para pela pelas pelo pelos por qual quando que quem se sem ser seu seus sua suas são
        também te tem têm um uma umas uns você""",
    "nl": """aan al alle als altijd ben bij dan dat de deze die dit door doen een en er geen
        had heb hebben heeft hem het hier hij hoe hun ik in is ja je kan kunnen maar me meer
        men met mij mijn na naar niet niets nog nu of om omdat ons onze ook op over te tegen
        toch tot u uit van veel voor want was wat we wel werd wie wij wil worden wordt zal ze
        zich zij zijn zo zonder zou""",
    "ru": """а без более бы был была были было быть в вам вас во вот все всё всех вы где да
        даже для до его ее её если есть еще ещё же за и из или им их к как ко когда кто ли
        либо между меня мне может мы на над надо не него нее неё нет ни них но ну о об однако
        он она они оно от по под при с со так также такой там те тем то того тоже той только
        том ты у уже чем что чтобы эта эти это этот я""",
}
STOP_WORDS = {code: frozenset(words.split()) for code, words in _LISTS.items()}
_WORD = re.compile(r"(?u)\w+")


@lru_cache(maxsize=1)
def _english() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def language_of(text: str) -> str | None:
    """The language of ``STOP_WORDS`` whose stop words ``text`` uses most (None: English, or
    too few for any): counted on its first ``PROBE`` words.

    Example:
        >>> language_of("Le fichier est lu et la liste des pages est reconstruite.")
        'fr'
        >>> language_of("die hard") is None  # two words: no language is told by so few
        True
        >>> language_of("A boy feeding a sheep hay.") is None  # "a" is English too
        True
    """
    words = [w.lower() for w in _WORD.findall(text[:PROBE * 12])[:PROBE]]
    english = sum(w in _english() for w in words)
    hits = {code: sum(w in stop for w in words) for code, stop in _OWN.items()}
    code, best = max(hits.items(), key=lambda item: item[1])
    return code if best >= MIN_HITS and best > english else None


def _own_words() -> dict[str, frozenset[str]]:
    """Each language's stop words that are not English ones ("a", "in", "be" tell nothing)."""
    return {code: stop - _english() for code, stop in STOP_WORDS.items()}


def stop_words_of(text: str, english: frozenset[str]) -> frozenset[str]:
    """``english`` (the English list), and the stop words of ``text``'s language if it is one
    of ``STOP_WORDS``.

    Example:
        >>> "und" in stop_words_of("Der Hund und die Katze sind im Haus.", frozenset())
        True
    """
    code = language_of(text)
    return english if code is None else _with(english, code)


@lru_cache(maxsize=64)
def _with(english: frozenset[str], code: str) -> frozenset[str]:
    """``english`` and the stop words of ``code``, made once per pair."""
    return english | STOP_WORDS[code]


_OWN = _own_words()
