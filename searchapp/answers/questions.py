"""Whether a query reads as a question or a request for a fact, so an answer is sought.

A query ending in "?", starting with a question word ("how", "what", "when", "which", ...),
an auxiliary that opens a question ("can", "does", "is", ...) or a request ("tell me",
"explain", "show me how") asks for an answer; keywords ("postgres port", "ERR-40417") do
not, and show hits only unless an answer is asked for (``--answer``, the page's switch).

Example:
    >>> [reads_as_question(q) for q in ("how do I change the port", "port config",
    ...                                 "When does the lease end?", "explain rebase")]
    [True, False, True, True]
"""

from __future__ import annotations

import re

_QUESTION_WORDS = ("how what when where why who whom whose which wie was wann wo warum wer "
                   "welche comment quoi quand où pourquoi qui quel quelle cómo qué cuándo dónde "
                   "quién cuál")
_AUXILIARIES = ("can could do does did is are was were will would should shall may might must "
                "has have had am isn't aren't doesn't don't can't won't")
QUESTION_WORDS = frozenset(_QUESTION_WORDS.split())
AUXILIARIES = frozenset(_AUXILIARIES.split())
REQUESTS = ("tell me", "show me", "explain", "describe", "define", "list", "give me",
            "i need to know", "i want to know", "is there a way", "what's", "how's")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def reads_as_question(query: str) -> bool:
    """True when ``query`` asks something (see the module's docstring).

    Example:
        >>> reads_as_question("Is sudo installed by default"), reads_as_question("sudo")
        (True, False)
    """
    text = " ".join(str(query).split()).lower()
    if not text:
        return False
    if text.rstrip().endswith(("?", "？", "¿")) or text.startswith("¿"):
        return True
    words = _WORD.findall(text)
    if len(words) < 2:
        return False
    first = words[0].replace("’", "'")
    return first in QUESTION_WORDS or (first in AUXILIARIES and len(words) >= 3) \
        or text.startswith(REQUESTS)
