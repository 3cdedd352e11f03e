"""Long documents → overlapping passages that each fit the model's window.

The encoder sees at most ``max_seq_length`` word pieces (256 for the bundled
model, two of them [CLS] and [SEP]); a longer text would be cut and its end
never searchable. A document longer than half that window (``window_for``;
``SEARCHAPP_PASSAGE_TOKENS`` sets another) is split into passages of
at most ``window`` tokens that overlap by about ``overlap`` tokens, ending at a
sentence boundary where one lies in the second half of the window and starting
the next passage at a sentence start inside the overlap where there is one.
Each passage is embedded and indexed on its own; a document's score is its best
passage's (``searchapp.search.service``).

The document's own vector (used by duplicates and clusters, which work on
documents) is the normalised mean of its passages' vectors: every part of the
text counts, not only its beginning (measured in ``benchmarks/retrieval_quality.py``).

Spans are character offsets into the document's text, so a hit can show the
passage that matched. The tokenizer is the model's own: any registered model,
fine-tuned ones included, is split by what it actually reads.

Example:
    >>> pieces = [(0, 3), (4, 7), (7, 8), (9, 12), (13, 17), (17, 18)]  # 2 sentences
    >>> plan_spans("One two. Six five.", pieces, window=4, overlap=1)  # ends at the sentence
    [(0, 8), (7, 18)]
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from searchapp.embedding import speed
from searchapp.embedding.sentences import sentence_spans

SPECIAL_TOKENS = 2  # [CLS] and [SEP] take two places of the model's window
WINDOW_SHARE = 0.5  # a passage's share of the model's window (see window_for)
MAX_PASSAGES = 4096  # per document; also the stride of passage labels (see PassageIndex)
_SENTENCE_END = re.compile(r"[.!?…。！？][\"'”’)\]]*\s+|\n\s*")


@dataclass(frozen=True)
class PassagePlan:
    """How one text is embedded: its passages' spans (one span when it fits the window),
    and for a document read from a file each passage's heading path (or None), which is
    encoded before the passage so that a passage from the middle of a section still says
    what it is about ("Backups > Restoring the dump" before "Run psql with the file")."""

    spans: list[tuple[int, int]]
    heads: list[str | None] | None = None

    @property
    def split(self) -> bool:
        return len(self.spans) > 1


def window_for(max_seq_length: int, tokens: int | None = None) -> tuple[int, int]:
    """(window, overlap) in tokens for a model's max length; ``tokens`` asks for another window.

    By default a passage is half the model's window (``WINDOW_SHARE``): one
    sentence in a passage of 254 tokens weighs too little in its mean-pooled
    vector (``benchmarks/retrieval_quality.py`` measures both); the overlap is a
    quarter of the window.

    Example:
        >>> window_for(256), window_for(256, tokens=254), window_for(256, tokens=999)
        ((127, 31), (254, 63), (254, 63))
    """
    full = max(8, int(max_seq_length) - SPECIAL_TOKENS)
    window = max(8, min(full, int(tokens) if tokens else int(full * WINDOW_SHARE)))
    return window, window // 4


def sentence_starts(text: str) -> list[int]:
    """Character offsets where a sentence (or a line) starts, 0 excluded."""
    return [m.end() for m in _SENTENCE_END.finditer(text) if m.end() < len(text)]


def plan_spans(text: str, offsets: Sequence[tuple[int, int]], window: int, overlap: int
               ) -> list[tuple[int, int]]:
    """Character spans of passages over tokens with ``offsets`` (start, end), in order.

    Passages hold at most ``window`` tokens; the next one starts ``overlap``
    tokens before the previous end, moved to a sentence start inside the overlap
    when there is one. A passage ends at the last sentence end in its second half.
    """
    n = len(offsets)
    if n <= window:
        return [(0, len(text))]
    token_starts = [a for a, _ in offsets]
    boundary = sorted({i for i in (bisect_left(token_starts, c) for c in sentence_starts(text))
                       if 0 < i < n})
    spans, start = [], 0
    while True:
        end = min(start + window, n)
        if end < n:  # the last sentence start in the second half of the window
            j = bisect_right(boundary, end) - 1
            if j >= 0 and boundary[j] >= start + window // 2:
                end = boundary[j]
        spans.append((offsets[start][0], offsets[end - 1][1]))
        if end >= n or len(spans) >= MAX_PASSAGES:
            return spans
        j = bisect_left(boundary, end - overlap)  # the first sentence start in the overlap
        lead = boundary[j] if j < len(boundary) and boundary[j] < end else end - overlap
        start = max(lead, start + 1)


def plan(encoder, texts: Sequence[str], tokens: int | None = None,
         layouts: Sequence[list | None] | None = None,
         checkpoint: Callable[[], None] | None = None) -> list[PassagePlan]:
    """A PassagePlan per text for this encoder's tokenizer and window (``tokens``: the
    passage window, ``Settings.passage_tokens``; None: from the model).

    Texts whose UTF-8 length is within the window cannot exceed it (no tokenizer
    makes more tokens than bytes) and are not tokenised again here. A text with a
    layout of two parts or more (a document read from a file: its pages or
    sections, ``layouts[i]`` = [[start, end, page, section], ...]) is planned part
    by part, so no passage spans two pages. Long texts are tokenised
    ``speed.TOKENIZE_CHARS`` characters at a time, ``checkpoint`` called before each.
    """
    window, overlap = window_for(encoder.max_seq_length, tokens)
    plans: list[PassagePlan | None] = [None] * len(texts)
    pieces: list[tuple[int, int, int]] = []  # (text, start, end) planned on their own
    sections: list[str | None] = []  # per piece: the heading path of its part
    for i, text in enumerate(texts):
        parts = layouts[i] if layouts is not None else None
        if parts and len(parts) > 1:
            pieces += [(i, int(p[0]), int(p[1])) for p in parts]
            sections += [p[3] if len(p) > 3 else None for p in parts]
        elif len(text.encode("utf-8")) <= window:
            plans[i] = PassagePlan([(0, len(text))])
        else:
            pieces.append((i, 0, len(text)))
            sections.append(None)
    spans: dict[int, list[tuple[int, int]]] = {}
    heads: dict[int, list[str | None]] = {}
    planned = _plan_pieces(encoder, texts, pieces, window, overlap, checkpoint)
    for (i, a, _end), section, piece_spans in zip(pieces, sections, planned, strict=True):
        spans.setdefault(i, []).extend((a + x, a + y) for x, y in piece_spans)
        heads.setdefault(i, []).extend([section] * len(piece_spans))
    for i, found in spans.items():
        named = heads[i][:MAX_PASSAGES] if any(heads[i]) else None
        plans[i] = PassagePlan(found[:MAX_PASSAGES], named)
    return plans  # type: ignore[return-value]


def with_head(text: str, head: str | None) -> str:
    """A passage as it is encoded: its heading path first, unless the passage starts with it.

    Example:
        >>> with_head("Run psql.", "Backups > Restoring"), with_head("Restoring it", "Restoring")
        ('Backups > Restoring\\nRun psql.', 'Restoring it')
    """
    if not head or text.lstrip().startswith(head.rsplit(" > ", 1)[-1]):
        return text
    return f"{head}\n{text}"


def _plan_pieces(encoder, texts: Sequence[str], pieces: list[tuple[int, int, int]],
                 window: int, overlap: int, checkpoint: Callable[[], None] | None = None
                 ) -> list[list[tuple[int, int]]]:
    """Spans within each piece (text, start, end), relative to its start; pieces within
    the window by their UTF-8 length are one span without tokenising."""
    out: list[list[tuple[int, int]] | None] = []
    long_pieces: list[int] = []
    for n, (i, a, b) in enumerate(pieces):
        if len(texts[i][a:b].encode("utf-8")) <= window:
            out.append([(0, b - a)])
        else:
            out.append(None)
            long_pieces.append(n)
    chosen = [texts[pieces[n][0]][pieces[n][1]:pieces[n][2]] for n in long_pieces]
    for chunk in speed.char_chunks([len(t) for t in chosen]):
        if checkpoint is not None:
            checkpoint()
        with encoder.inference_lock:
            tokens = encoder.tokenizer([chosen[k] for k in chunk], add_special_tokens=False,
                                       return_offsets_mapping=True, truncation=False,
                                       return_attention_mask=False, verbose=False)
        for k, offsets in zip(chunk, tokens["offset_mapping"], strict=True):
            out[long_pieces[k]] = plan_spans(chosen[k], offsets, window, overlap)
    return out  # type: ignore[return-value]


@dataclass(frozen=True)
class Embedded:
    """A batch embedded: document vectors (n, dim), per split document its passages, and
    (when asked) per document its sentences by passage."""

    vectors: np.ndarray
    passages: dict[int, tuple[np.ndarray, np.ndarray]]  # row -> (vectors (p, dim), spans (p, 2))
    # row -> [(passage number, spans (s, 2), vectors (s, dim))]; {} when not asked
    sentences: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = field(default_factory=dict)

    @property
    def split(self) -> int:
        return len(self.passages)


def embed_documents(encoder, texts: Sequence[str], tokens: int | None = None,
                    layouts: Sequence[list | None] | None = None,
                    checkpoint: Callable[[], None] | None = None,
                    sentences: bool = False) -> Embedded:
    """Vectors for documents, long ones through their passages (one encoder call in all,
    and one more for the sentences when asked).

    ``checkpoint`` goes to the encoder, which calls it between its batches (a job
    stops there when cancelled: see ``SiameseEncoder.encode``); it is also called
    once the passages are planned. ``sentences``: also cut each text into sentences
    (``searchapp.embedding.sentences``) and encode them, for answers
    (``Embedded.sentences``); a passage that is one sentence gives it its own vector (not
    encoded twice). A sentence is encoded alone, without its passage's heading path: an
    answer's score blends in its passage's cosine, which carries the heading, and the
    path doubled the sentences' tokens (``benchmarks/answers.py``: hit@1 51.7 with the
    path, 51.0 without, well within the interval; on the two FAQs 84,865 sentence tokens
    with it, 41,613 without, beside 54,979 of passages).

    Example:
        >>> out = embed_documents(encoder, ["short", "a long text ... " * 200])  # doctest: +SKIP
        >>> out.vectors.shape, list(out.passages)                                # doctest: +SKIP
        ((2, 384), [1])
    """
    plans = plan(encoder, texts, tokens, layouts, checkpoint)
    pieces: list[str] = []
    owners: list[tuple[int, int, int]] = []  # per text: (row, first piece, piece count)
    for row, (text, p) in enumerate(zip(texts, plans, strict=True)):
        owners.append((row, len(pieces), len(p.spans)))
        if not p.split:
            pieces.append(text)
            continue
        heads = p.heads or [None] * len(p.spans)
        pieces.extend(with_head(text[a:b], head) for (a, b), head in zip(p.spans, heads,
                                                                        strict=True))
    cut = sentence_plan(texts, plans, layouts) if sentences else {}
    alone: list[str] = []  # the sentences encoded on their own
    sentence_pieces: list[int | None] = []  # per sentence: its own piece, or None: its passage's
    for row, parts in cut.items():
        for number, spans in parts:
            if _is_passage(texts[row], plans[row].spans[number], spans):
                sentence_pieces.append(None)
                continue
            for a, b in spans:
                sentence_pieces.append(len(pieces) + len(alone))
                alone.append(texts[row][a:b])  # alone: its passage carries the head
    if checkpoint is not None:
        checkpoint()
    # the documents' pieces in a call of their own: batched as without sentences, so their
    # vectors are the very ones an encoding without sentences gives (bf16 reads a batch's
    # padding; evaluation.encoded compares a corpus encoded in memory with the stored one)
    encoded = encoder.encode(pieces, checkpoint=checkpoint)  # (pieces, dim)
    if alone:
        encoded = np.concatenate([encoded, encoder.encode(alone, checkpoint=checkpoint)])
    vectors = np.empty((len(texts), encoded.shape[1]), dtype=np.float32)
    passages: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for row, first, count in owners:
        part = encoded[first:first + count]
        if count == 1:
            vectors[row] = part[0]
            continue
        mean = part.mean(axis=0)
        vectors[row] = mean / max(float(np.linalg.norm(mean)), 1e-12)
        passages[row] = (np.ascontiguousarray(part, dtype=np.float32),
                         np.asarray(plans[row].spans, dtype=np.int32))
    return Embedded(vectors, passages,
                    _sentence_vectors(cut, sentence_pieces, encoded, owners))


def sentence_plan(texts: Sequence[str], plans: Sequence[PassagePlan],
                  layouts: Sequence[list | None] | None = None
                  ) -> dict[int, list[tuple[int, list[tuple[int, int]]]]]:
    """Per text with a sentence: [(passage, [sentence span, ...]), ...], each sentence in the
    first passage that holds its start (passages overlap).

    A text with a layout (a document read from a file) is cut part by part, and a part's
    heading line (its section's last heading, which the reader puts first) is a unit of its
    own: a sentence never runs from one section into the next, nor a heading into its text.

    Example:
        >>> sentence_plan(["One. Two.", "Alone", " "],
        ...               [PassagePlan([(0, 9)]), PassagePlan([(0, 5)]), PassagePlan([(0, 1)])])
        {0: [(0, [(0, 4), (5, 9)])], 1: [(0, [(0, 5)])]}
        >>> text = "Restoring the Dump\\nFeed the file to psql"
        >>> sentence_plan([text], [PassagePlan([(0, len(text))])],
        ...               [[[0, len(text), None, "Backups > Restoring the Dump"]]])
        {0: [(0, [(0, 18), (19, 40)])]}
    """
    out: dict[int, list[tuple[int, list[tuple[int, int]]]]] = {}
    for row, (text, p) in enumerate(zip(texts, plans, strict=True)):
        ends = [b for _, b in p.spans]
        by_passage: dict[int, list[tuple[int, int]]] = {}
        layout = layouts[row] if layouts is not None else None
        for a, b in _sentences_by_part(text, layout):  # the first passage ending after a
            number = min(bisect_right(ends, a), len(ends) - 1)
            by_passage.setdefault(number, []).append((a, b))
        if by_passage:
            out[row] = sorted(by_passage.items())
    return out


def _sentences_by_part(text: str, layout: list | None) -> list[tuple[int, int]]:
    """The text's sentence spans, cut within each part of its layout, headings apart."""
    if not layout:
        return sentence_spans(text)
    found: list[tuple[int, int]] = []
    for part in layout:
        a, b, section = int(part[0]), int(part[1]), part[3] if len(part) > 3 else None
        heading = str(section).rsplit(" > ", 1)[-1].strip() if section else ""
        lead = len(text[a:b]) - len(text[a:b].lstrip())
        if heading and text.startswith(heading, a + lead):
            found.append((a + lead, a + lead + len(heading)))
            a += lead + len(heading)
        found += [(a + x, a + y) for x, y in sentence_spans(text[a:b])]
    return found


def _is_passage(text: str, passage: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    """A passage that is one sentence: the sentence's vector is the passage's (not encoded
    twice)."""
    return len(spans) == 1 and text[spans[0][0]:spans[0][1]] == \
        text[passage[0]:passage[1]].strip()


def _sentence_vectors(cut: dict, sentence_pieces: list[int | None], encoded: np.ndarray,
                      owners: list[tuple[int, int, int]]
                      ) -> dict[int, list[tuple[int, np.ndarray, np.ndarray]]]:
    """The sentences' vectors per text and passage (in ``cut``'s order): each its own
    piece's, or for a passage of one sentence the passage's."""
    out: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
    first_piece = {row: first for row, first, _ in owners}
    at = 0
    for row, parts in cut.items():
        out[row] = []
        for number, spans in parts:
            if sentence_pieces[at] is None:
                rows = [first_piece[row] + number]
                at += 1
            else:
                rows = sentence_pieces[at:at + len(spans)]
                at += len(spans)
            out[row].append((number, np.asarray(spans, np.int32), encoded[rows]))
    return out
