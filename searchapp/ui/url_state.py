"""What a page remembers: its state in the address, and the last-used corpus.

A page's choices (the corpus, a search's query, mode, k, filters and page)
live in the address as query parameters, so a reload, the Back button, a
bookmark or a link sent to a colleague show the same thing; the same choices
are kept in the session for the pages whose address lost them (the sidebar's
links carry no parameters). The corpus chosen last is also written to the data
folder (``ui-last-corpus``), so a new session opens on it rather than on the
first corpus of the list.

Order of precedence for a value: the address, when it changed since this
session last wrote it (a reload, Back, a link opened); then what the session
holds; then the default.

Example (inside a page script):
    >>> state = UrlState(st.query_params, st.session_state, "search")   # doctest: +SKIP
    >>> state.seed("search-query", "q", "")                              # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
from collections.abc import MutableMapping, Sequence
from pathlib import Path

CORPUS_PARAM = "corpus"
LAST_CORPUS_FILE = "ui-last-corpus"
_WRITTEN = "url.written"  # session key: {param: value(s)} as this session last wrote them


def _normal(value) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


class UrlState:
    """The address's query parameters, seen from one session.

    ``params`` is ``st.query_params`` (or any mapping with ``get_all``), ``session``
    is ``st.session_state``. Knowing what the session last wrote, it can tell
    an address changed from outside (Back, a reload, a link) from its own echo.

    Example:
        >>> class Params(dict):
        ...     def get_all(self, key):
        ...         value = self.get(key)
        ...         return [] if value is None else value if isinstance(value, list) else [value]
        >>> state = UrlState(Params(q="dogs"), {})
        >>> state.incoming("q")
        ('dogs',)
        >>> state.write("q", "cats"); state.incoming("q") is None
        True
    """

    def __init__(self, params, session: MutableMapping) -> None:
        self.params = params
        self.session = session
        self.written: dict = session.setdefault(_WRITTEN, {})

    def current(self, key: str) -> tuple[str, ...]:
        """The parameter's values in the address now (empty when absent)."""
        return tuple(self.params.get_all(key))

    def incoming(self, key: str) -> tuple[str, ...] | None:
        """The address's values when they are news to this session, else None.

        News: present and different from what this session last wrote there.
        """
        now = self.current(key)
        if not now or now == self.written.get(key):
            return None
        return now

    def write(self, key: str, value: str | Sequence[str] | None) -> None:
        """Put ``value`` in the address (None or empty: remove the parameter)."""
        values = _normal(value)
        self.written[key] = values
        if self.current(key) == values:
            return
        if not values:
            self.params.pop(key, None)
        elif len(values) == 1:
            self.params[key] = values[0]
        else:
            self.params[key] = list(values)

    def seed(self, widget_key: str, param: str, default, parse=str):
        """Give a widget its value before it is drawn: the address's when it is news, the
        session's when the widget still has one, else ``default``. Returns the value set.

        ``parse`` turns the address's text into the widget's type; a value it
        rejects (ValueError) is ignored, so a hand-edited address cannot break a page.
        """
        news = self.incoming(param)
        if news is not None:
            with contextlib.suppress(ValueError, TypeError):
                self.session[widget_key] = parse(news[0])
                return self.session[widget_key]
        if widget_key not in self.session:
            self.session[widget_key] = default
        return self.session[widget_key]


def read_last_corpus(data_dir: Path) -> str | None:
    """The corpus chosen last in any session of this data folder, if recorded.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> read_last_corpus(folder) is None
        True
        >>> write_last_corpus(folder, "faq"); read_last_corpus(folder)
        'faq'
    """
    try:
        return (Path(data_dir) / LAST_CORPUS_FILE).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def write_last_corpus(data_dir: Path, name: str) -> None:
    """Record ``name`` as the corpus chosen last (a preference: a failed write is ignored)."""
    path = Path(data_dir) / LAST_CORPUS_FILE
    with contextlib.suppress(OSError):
        if read_last_corpus(data_dir) != name:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_suffix(".tmp")
            temp.write_text(name, encoding="utf-8")
            temp.replace(path)


def pick_default(names: Sequence[str], *candidates: str | None) -> int:
    """The index in ``names`` of the first candidate that is a corpus, else 0.

    Example:
        >>> pick_default(["a", "b", "c"], None, "gone", "c")
        2
    """
    for name in candidates:
        if name in names:
            return list(names).index(name)
    return 0
