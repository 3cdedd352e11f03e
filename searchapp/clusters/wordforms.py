"""Whether two words are forms of one: plurals (irregular ones too), -ing and -ed forms.

Cluster labels use this to say each word once ("dogs" or "dog", "posing" or
"pose", "women" or "woman") and to tell when two labels say the same thing. It
is a handful of English suffix rules and a short table of irregular plurals,
not a stemmer: it need only recognise forms that c-TF-IDF ranks side by side,
and never merge different words ("people" is not taken for "person", nor
"news" for "new").

Example:
    >>> same_word("women", "woman"), same_word("posing", "pose"), same_word("people", "person")
    (True, True, False)
"""

from __future__ import annotations

from functools import lru_cache

SUFFIXES = ("s", "es", "ing", "ed")
VOWELS = frozenset("aeiouy")
# Plurals no suffix rule reaches, also as the end of a longer word ("grandchildren",
# "firemen", "housewives"). "people" is missing on purpose: it is a word of its own.
IRREGULAR_PLURALS = {
    "children": "child", "men": "man", "women": "woman", "mice": "mouse", "geese": "goose",
    "feet": "foot", "teeth": "tooth", "lice": "louse",
    "knives": "knife", "wives": "wife", "lives": "life", "leaves": "leaf", "wolves": "wolf",
    "halves": "half", "shelves": "shelf", "loaves": "loaf", "thieves": "thief",
    "calves": "calf", "scarves": "scarf", "hooves": "hoof",
    "criteria": "criterion", "phenomena": "phenomenon", "analyses": "analysis",
    "theses": "thesis", "crises": "crisis", "diagnoses": "diagnosis",
    "hypotheses": "hypothesis", "indices": "index", "matrices": "matrix",
    "vertices": "vertex", "appendices": "appendix", "cacti": "cactus", "fungi": "fungus",
    "nuclei": "nucleus", "radii": "radius", "stimuli": "stimulus", "bacteria": "bacterium",
    "curricula": "curriculum",
}
NOT_PLURAL = frozenset({"news"})  # ends in -s, and is not more than one "new"


@lru_cache(maxsize=65_536)
def stems(word: str) -> frozenset[str]:
    """The word and what it may be a form of; two words sharing one are forms of one word.

    Example:
        >>> sorted(stems("running")), sorted(stems("posing")), sorted(stems("firemen"))
        (['run', 'runn', 'running'], ['pos', 'pose', 'posing'], ['fireman', 'firemen'])
    """
    out = {word}
    for plural, singular in IRREGULAR_PLURALS.items():
        if word.endswith(plural):
            out.add(word.removesuffix(plural) + singular)
    if word in NOT_PLURAL:
        return frozenset(out)
    for suffix in SUFFIXES:
        stem = word.removesuffix(suffix)
        if stem == word:
            continue
        if len(stem) >= 3:
            out.add(stem)
        doubled = len(stem) >= 4 and stem[-1] == stem[-2]
        if doubled:  # running -> runn -> run
            out.add(stem[:-1])
        elif suffix in ("ing", "ed") and len(stem) >= 2 and stem[-1] not in VOWELS:
            out.add(stem + "e")  # posing -> pose, used -> use
    if word.endswith(("ies", "ied")) and len(word) >= 5:  # stories -> story, studied -> study
        out.add(word[:-3] + "y")
    return frozenset(out)


def same_word(a: str, b: str) -> bool:
    """Whether two words read as one (they share a stem).

    Example:
        >>> same_word("boxes", "box"), same_word("children", "child"), same_word("news", "new")
        (True, True, False)
    """
    return a == b or bool(stems(a) & stems(b))


def same_words(a: list[str], b: list[str]) -> bool:
    """Whether two lists of words say the same, whatever the forms and the order.

    Example:
        >>> same_words(["dog", "beach", "running"], ["run", "dogs", "beach"])
        True
        >>> same_words(["dog", "beach", "running"], ["dog", "beach", "sand"])
        False
    """
    return (all(any(same_word(x, y) for y in b) for x in a)
            and all(any(same_word(y, x) for x in a) for y in b))
