"""What can be judged and how: the kinds, the sources, the label ranges, an item's identity.

Pure checks, shared by the service and the CSV reader, so a label typed in
the CLI and one read from a file are refused with the same words.

Example:
    >>> item_of(a="q9", b="q10"), check_label("query", 3)
    (('pair', None, 'q10', 'q9'), 3)
"""

from __future__ import annotations

from searchapp.corpora.names import check_id, check_text_value
from searchapp.errors import InvalidParameterError

KINDS = ("query", "pair", "answer")
SOURCES = ("search", "duplicates", "label", "review", "import", "cli", "api")
MAX_GRADE = 3  # query labels: 0 not relevant, 1 relevant, 2 highly, 3 perfectly
MAX_QUERY_CHARS = 2_000
MAX_ANSWER_CHARS = 500  # an answer judgement keeps the sentence (b) in this many characters


def normalise_query(query: str) -> str:
    """The query as stored: whitespace runs become one space, ends trimmed.

    Example:
        >>> normalise_query("  reset   my\\tpassword ")
        'reset my password'
    """
    return " ".join(str(query).split())


def check_source(source: str) -> str:
    if source not in SOURCES:
        raise InvalidParameterError(
            f"Unknown judgement source {source!r}; use one of: {', '.join(SOURCES)}.")
    return source


def check_kind(kind: str | None) -> str | None:
    if kind is not None and kind not in KINDS:
        raise InvalidParameterError(
            f"Unknown judgement kind {kind!r}; use one of: {', '.join(KINDS)}.")
    return kind


def check_label(kind: str, label: int | bool) -> int:
    """The label as an int, within its kind's range (query 0–3, pair 0–1).

    Example:
        >>> check_label("pair", True), check_label("query", 2)
        (1, 2)
        >>> check_label("pair", 2)
        Traceback (most recent call last):
        ...
        searchapp.errors.InvalidParameterError: A pair's label is 1 (duplicate) or 0 (not); got 2.
    """
    try:
        value = int(label)
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"A label is a whole number; got {label!r}.") from exc
    if value != label:
        raise InvalidParameterError(f"A label is a whole number; got {label!r}.")
    if kind == "pair" and value not in (0, 1):
        raise InvalidParameterError(f"A pair's label is 1 (duplicate) or 0 (not); got {value}.")
    if kind == "answer" and value not in (0, 1):
        raise InvalidParameterError(f"An answer's label is 1 (right) or 0 (wrong); got {value}.")
    if kind == "query" and not 0 <= value <= MAX_GRADE:
        raise InvalidParameterError(
            f"A query judgement's label is a grade from 0 (not relevant) to {MAX_GRADE}; "
            f"got {value}.")
    return value


def item_of(query: str | None = None, doc: str | None = None, a: str | None = None,
            b: str | None = None, answer: str | None = None
            ) -> tuple[str, str | None, str, str | None]:
    """(kind, query, a, b) of what is judged: query + doc, or a + b (ordered a < b), or
    query + doc + answer (the answer's sentence, as b: whitespace runs made one space, at
    most ``MAX_ANSWER_CHARS``), a sentence of that document shown as the query's answer.

    Document ids follow the documents' one rule (``corpora.names.check_id``:
    spaces around them removed, control characters and ``.``/``..`` refused), so
    a judgement names a document as the corpus stores it and exports read back.

    Example:
        >>> item_of(a="q9", b="q10")
        ('pair', None, 'q10', 'q9')
        >>> item_of(query=" reset  password", doc=" q1 ")
        ('query', 'reset password', 'q1', None)
        >>> item_of(query="how to reset?", doc="q1", answer=" Click  Reset. ")
        ('answer', 'how to reset?', 'q1', 'Click Reset.')
    """
    if answer is not None:
        _, q, d, _ = item_of(query=query, doc=doc)
        text = normalise_query(answer)[:MAX_ANSWER_CHARS]
        if not text:
            raise InvalidParameterError("An answer judgement needs the answer's sentence.")
        return "answer", q, d, check_text_value(text, "answer")
    if query is not None or doc is not None:
        if a is not None or b is not None:
            raise InvalidParameterError(
                "Judge either a query and a document (query, doc) or a pair (a, b), not both.")
        if doc is None or not str(doc):
            raise InvalidParameterError("A query judgement needs the judged document's id.")
        q = normalise_query(query or "")
        if not q:
            raise InvalidParameterError("A query judgement needs the query's text.")
        if len(q) > MAX_QUERY_CHARS:
            raise InvalidParameterError(
                f"A judged query has at most {MAX_QUERY_CHARS:,} characters; got {len(q):,}.")
        return "query", check_text_value(q, "query"), check_id(str(doc)), None
    if a is None or b is None or not str(a) or not str(b):
        raise InvalidParameterError(
            "Say what is judged: a query and a document (query, doc), or two documents (a, b).")
    a, b = check_id(str(a)), check_id(str(b))
    if a == b:
        raise InvalidParameterError(f"A pair needs two different documents; got {a!r} twice.")
    return ("pair", None, *sorted((a, b)))  # type: ignore[return-value]
