"""How a failure reaches a person: one line, escaped, capped, and a reference into a log.

Every front end (the CLI, the worker, the pages) has one boundary that calls
``describe``: a ``SearchAppError`` becomes its own message; anything else (a
bug, an error nobody classified) is written with its traceback to a log file
under a fresh reference, and the person sees one line naming the reference
and the file, never the traceback and never the data the error quoted.

Text that came from users (documents, ids, names, messages that quote them)
goes through ``printable`` before it reaches a terminal: control characters
(C0, DEL, C1, so also ESC sequences), bidirectional overrides and isolates,
line and paragraph separators and lone surrogates become ``\\uXXXX``, so a
document cannot move the cursor, set a window title, reorder a line or forge
a line of output. The escapes are JSON escapes: applied to JSON text they keep
it valid and the same value. Text that reaches a page (Streamlit renders Markdown
in almost every element) goes through ``md_escape`` first, so it shows as typed:
never a link, an image, HTML, emphasis, a heading, a colour or LaTeX.

Example:
    >>> printable("ok\\x1b]0;owned\\x07\\u202edone")
    'ok\\\\u001b]0;owned\\\\u0007\\\\u202edone'
    >>> one_line("first line\\n\\tsecond " + "x" * 50, limit=30)
    'first line second xxxxxxxxxxx…'
    >>> from searchapp.errors import CorpusNotFoundError
    >>> describe(CorpusNotFoundError("faq"), log_file=None)
    "No corpus named 'faq'. Existing corpora: (none yet)."
"""

from __future__ import annotations

import os
import re
import secrets
import time
import traceback
from pathlib import Path

from searchapp.base.private_files import open_private_file, private_temp_dir
from searchapp.errors import SearchAppError

MESSAGE_LIMIT = 500  # characters of a one-line message (a job's error, an error: line)
LOG_NAME = "searchapp.log"  # the CLI's log in the data folder; the worker's is worker.log
# C0 and DEL, C1, the bidirectional marks, embeddings, overrides and isolates, the line
# and paragraph separators, and lone surrogates (undecodable bytes): never sent raw.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                     "\ud800-\udfff]")
# Markdown: what always starts markup (emphasis, code, links and images, HTML and autolinks,
# strike-through, LaTeX, tables, headings, entities, e-mail autolinks), what starts a block
# at the start of a line (lists, setext and thematic lines), a colon that is not followed by
# a space (Streamlit's :color[..] directives, :material/..: icons and :emoji: shortcodes,
# http:// autolinks), and the dot of a "www." autolink.
_MD_ALWAYS = re.compile(r"([\\`*_\[\]<>~$|#&@])")
_MD_COLON = re.compile(r":(?![ \t\n])")
_MD_WWW = re.compile(r"(?i)(?<=www)\.")
# Streamlit's front end also links URLs and e-mail addresses it finds in the text after
# the Markdown is parsed, escapes undone: an invisible word joiner (U+2060) breaks them.
_MD_LINKABLE = re.compile(r"(?i)(?:https?(?=:)|www(?=\.))|(?=@)")
WORD_JOINER = "\u2060"
_MD_LINE_START = re.compile(r"^( ?\d{1,9}(?=[.)])| ?(?=[-+=]))", re.MULTILINE)
_MD_LAST_NUMBER = re.compile(r"(?:^|(?<=\n)) ?(\d)(?=\d{0,8}$)")  # "12" + a message's "."
_UNSAFE_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f"
                                 "\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def printable(text: object, keep_newlines: bool = False) -> str:
    """``str(text)`` with every control, bidi or separator character as a ``\\uXXXX`` escape.

    ``keep_newlines`` leaves ``\\n`` alone (for whole blocks of output the
    program laid out itself; a field of user data never keeps them).

    Example:
        >>> printable("a\\nb\\r\\u2028c"), printable("a\\nb", keep_newlines=True)
        ('a\\\\u000ab\\\\u000d\\\\u2028c', 'a\\nb')
    """
    pattern = _UNSAFE_BUT_NEWLINE if keep_newlines else _UNSAFE
    return pattern.sub(_escape, str(text))


def md_escape(text: object) -> str:
    """``str(text)`` as Markdown that shows it as typed, wherever it is put in a message: no
    link, image, HTML, autolink, emphasis, code, heading, list, table, LaTeX, entity, nor
    Streamlit's ``:color[..]``, ``:material/..:`` or ``:emoji:`` shortcodes.

    The one escape of every string a user or a file supplies (an address parameter, a file
    name, metadata, document text, an error message quoting them) before a page renders it
    (``st.markdown``, ``st.error``, a widget's label or help...). Markup characters get a
    backslash (CommonMark's escape of ASCII punctuation); a colon not followed by a space
    becomes ``&#58;``, because Streamlit reads colons in the raw text before the Markdown
    parser does (icons, emoji); ``http``, ``https`` and ``www`` before ``:``/``.``, and
    ``@``, get an invisible word joiner (U+2060), because it links URLs and addresses found
    in the parsed text; a line's leading blanks go, or become one space on the first
    line (the page collapses them anyway, and four would start a code block), and a newline
    becomes a line break, so no line of the text starts a block (a number that ends a line
    has its first digit as an entity: "12" + a message's "." is no list). Ordinary
    punctuation stays, so messages read the same.

    Example:
        >>> md_escape("[login](http://evil.example) *now* $5")
        '\\\\[login\\\\](http\u2060&#58;//evil.example) \\\\*now\\\\* \\\\$5'
        >>> md_escape("Nothing was stored: :red[x]\\n- item")
        'Nothing was stored: &#58;red\\\\[x\\\\]  \\n\\\\- item'
    """
    text = str(text).replace("\r\n", "\n").replace("\r", "\n")
    first, *rest = text.split("\n")
    lead = " " if first[:1] in (" ", "\t") else ""  # one blank: it may separate two words
    text = "\n".join([lead + first.lstrip(" \t"), *(line.lstrip(" \t") for line in rest)])
    text = _MD_LINKABLE.sub(lambda m: m[0] + WORD_JOINER, text)
    text = _MD_ALWAYS.sub(r"\\\1", text)
    text = _MD_COLON.sub("&#58;", _MD_WWW.sub(r"\\.", text))
    text = _MD_LINE_START.sub(lambda m: m[1] + "\\" if m[1] else "\\", text)
    text = _MD_LAST_NUMBER.sub(lambda m: m[0][:-1] + f"&#{ord(m[1])};", text)
    return text.replace("\n", "  \n")


def one_line(text: object, limit: int = MESSAGE_LIMIT) -> str:
    """A message on one line: whitespace runs as one space, controls escaped, at most
    ``limit`` characters (cut with an ellipsis), so no message can carry a page of data.

    Example:
        >>> one_line("  a\\r\\n b  "), len(one_line("y" * 10_000))
        ('a b', 500)
    """
    flat = printable(" ".join(str(text).split()))
    return flat if len(flat) <= limit else flat[:limit - 1] + "…"


def new_reference() -> str:
    """A fresh reference for one failure: 6 hex digits, found with ``grep`` in the log.

    Example:
        >>> len(new_reference()), new_reference() != new_reference()
        (6, True)
    """
    return secrets.token_hex(3)


def fallback_log() -> Path:
    """Where a failure is logged when the data folder cannot take it (read-only, full): in
    this user's own folder of the temporary folder (``/tmp/searchapp-UID/searchapp.log``),
    which no one else can put a link in."""
    try:
        return private_temp_dir() / "searchapp.log"
    except OSError:
        return Path(os.devnull)


def log_exception(exc: BaseException, log_file: Path | None, where: str = "") -> tuple[str, Path]:
    """Append ``exc`` with its traceback to ``log_file`` under a new reference.

    Returns (reference, the file it went to): ``log_file``, or ``fallback_log()``
    when that cannot be written. The entry starts with ``[ref XXXXXX]`` on its
    first line, so ``grep XXXXXX FILE`` finds it.
    """
    reference = new_reference()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    entry = (f"{stamp} [ref {reference}] {where or 'searchapp'} pid {os.getpid()}: "
             f"{type(exc).__name__}\n"
             + "".join(traceback.format_exception(exc)).rstrip("\n") + "\n")
    for target in (log_file, fallback_log()):
        if target is None:
            continue
        try:
            if target == Path(os.devnull):
                continue
            with open_private_file(target, text_mode="a", encoding="utf-8",
                                   errors="backslashreplace") as f:
                f.write(entry)
            return reference, target
        except OSError:
            continue
    return reference, Path(os.devnull)


def unexpected(exc: BaseException, log_file: Path | None, where: str = "") -> str:
    """The one line a person sees for an error that is not a SearchAppError; logs it.

    Example:
        >>> unexpected(KeyError("x"), None)  # doctest: +ELLIPSIS
        'something went wrong (KeyError, reference ...); details in ...'
    """
    reference, target = log_exception(exc, log_file, where)
    return (f"something went wrong ({type(exc).__name__}, reference {reference}); details in "
            f"{printable(target)}")


def describe(exc: BaseException, log_file: Path | None, where: str = "") -> str:
    """The one-line message for any exception: a SearchAppError's own message (escaped and
    capped), anything else ``unexpected`` (logged with a reference in ``log_file``).

    The Streamlit pages' boundary, the CLI and the worker all call this.
    """
    if isinstance(exc, SearchAppError):
        return one_line(exc)
    return unexpected(exc, log_file, where)
