"""Problem details (RFC 9457) as the door and the JSON API write them.

Every error of the API, from the door's 401 to a corpus that does not exist,
is one JSON object served as ``application/problem+json``: ``type`` (a URN
naming the kind of problem, stable for programs to branch on), ``title``
(the kind in words), ``status`` (the HTTP status) and ``detail`` (the same
one-line message the CLI prints after ``error:``). Validation errors add
``errors``, one entry per wrong field.

Example:
    >>> problem(404, "not-found", "No corpus named 'faq'. Existing corpora: docs.")["title"]
    'Not Found'
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

MEDIA_TYPE = "application/problem+json"
TYPE_PREFIX = "urn:searchapp:problem:"


def problem(status: int, slug: str, detail: str, **extra: Any) -> dict[str, Any]:
    """The problem object for ``status``; ``slug`` names its kind (``type`` is a URN).

    Example:
        >>> problem(401, "unauthorized", "Send an API key.")["type"]
        'urn:searchapp:problem:unauthorized'
    """
    return {"type": f"{TYPE_PREFIX}{slug}", "title": HTTPStatus(status).phrase,
            "status": status, "detail": detail, **extra}


def problem_bytes(status: int, slug: str, detail: str, **extra: Any) -> bytes:
    """The problem object as the body of a response (UTF-8 JSON).

    Example:
        >>> problem_bytes(403, "read-only-key", "This key may only read.")[:9]
        b'{"type": '
    """
    return json.dumps(problem(status, slug, detail, **extra), ensure_ascii=False).encode()
