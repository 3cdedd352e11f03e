"""Text → sentence spans (temporary: the measured splitter replaces this)."""

from __future__ import annotations

import re

_END = re.compile(r"[.!?…。！？][\"'”’)\]]*\s+|\n\s*")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in [*_END.finditer(text), None]:
        end = m.end() if m else len(text)
        a, b = start, end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            spans.append((a, b))
        start = end
    return spans
