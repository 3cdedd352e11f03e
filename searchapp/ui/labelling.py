"""One item at a time, answered with the keyboard: the Label page and the review queue.

A ``Session`` (kept in ``st.session_state``) holds the items still to show (the
first is on screen), what was decided (for undo) and what was skipped. An
answer is a callback of a button with a keyboard shortcut: the callback stores
the judgement and moves to the next item before the fragment reruns, so one key
press is one rerun of the labelling area only (not the page around it): well
under a second, which is what lets a person keep up one judgement a second.

A decision names the item it was made on. The answer buttons are keyed by the
item drawn with them (``item_token``), so a key press in the browser goes to the
button of the item the person sees, and ``answer`` refuses it when that item is
no longer the one on screen (a second press that arrives before the next item is
drawn): it is never applied to the next item, which the person has not seen.

Example (inside a page script):
    >>> session = labelling_session("label-faq-pair")                  # doctest: +SKIP
    >>> keyboard_row("label", [("Yes", "y", "primary", say_yes), ...])   # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import streamlit as st

from searchapp.context import App
from searchapp.errors import SearchAppError
from searchapp.judgements import service
from searchapp.ui.common import md_escape

SHORTCUTS_NOTE = "Keys: **Y** yes · **N** no · **S** skip · **U** undo"
STALE_PRESS = ("A key press came for an item no longer on screen (pressed again before the "
               "next one was drawn): nothing was stored for it. Look at this one, then answer.")


@dataclass
class Decision:
    action: str  # "yes", "no" or "skip"
    item: object
    judgement_id: int | None = None


@dataclass
class Session:
    """What one person is doing in one labelling view (per corpus and kind)."""

    queue: list = field(default_factory=list)  # items to show; the first is on screen
    history: list[Decision] = field(default_factory=list)
    skipped: set = field(default_factory=set)  # keys of skipped items
    counts: Counter = field(default_factory=Counter)  # yes / no / skip this session
    message: str = ""  # the last error, shown once

    @property
    def current(self):
        return self.queue[0] if self.queue else None


def labelling_session(key: str) -> Session:
    return st.session_state.setdefault(key, Session())


def item_token(key: object) -> str:
    """A short, stable name for an item's key, for the keys of the widgets drawn with it.

    Example:
        >>> item_token(("a1", "b2")) == item_token(("a1", "b2")) != item_token(("a1", "b3"))
        True
    """
    return hashlib.sha256(repr(key).encode()).hexdigest()[:16]


def answer(app: App, corpus: str, session: Session, action: str, label: int | None,
           store: Callable[[object, int], int], key_of: Callable[[object], object],
           shown: object) -> None:
    """Record ``action`` on the item ``shown`` (the key of the item drawn with the button
    pressed): ``store(item, label)`` returns the judgement's id (yes / no), a skip only
    remembers the item; then the next item comes up. When ``shown`` is no longer the item
    on screen (the press came before the next one was drawn), nothing is recorded."""
    item = session.current
    if item is None:
        return
    if key_of(item) != shown:
        session.message = STALE_PRESS
        return
    judgement_id = None
    if action == "skip":
        session.skipped.add(key_of(item))
    else:
        try:
            judgement_id = store(item, label)
        except SearchAppError as exc:
            session.message = str(exc)
            return
    session.queue.pop(0)
    session.history.append(Decision(action, item, judgement_id))
    session.counts[action] += 1
    session.message = ""


def undo(app: App, corpus: str, session: Session, key_of: Callable[[object], object]) -> None:
    """Take back the last decision: its judgement removed (or the skip forgotten), the item
    back on screen."""
    if not session.history:
        return
    last = session.history.pop()
    if last.judgement_id is not None:
        with contextlib.suppress(SearchAppError):  # removed elsewhere meanwhile: nothing to do
            service.remove(app, corpus, last.judgement_id)
    else:
        session.skipped.discard(key_of(last.item))
    session.counts[last.action] -= 1
    session.queue.insert(0, last.item)
    session.message = ""


def keyboard_row(key: str, buttons: list[tuple[str, str, str, Callable[[], None]]],
                 disabled: bool = False, shown: object = None) -> None:
    """Buttons side by side, each (label, shortcut, type, on_click); the shortcut works
    anywhere on the page except in a text field. The answer buttons' keys name ``shown``
    (the key of the item on screen): a press reaches the callback drawn with that item,
    never one drawn with the next. Undo keeps one key (it takes back the last decision)."""
    token = item_token(shown)
    for col, (label, shortcut, kind, action) in zip(st.columns(len(buttons)), buttons,
                                                    strict=True):
        widget = f"{key}-{shortcut}" if label == "Undo" else f"{key}-{shortcut}-{token}"
        col.button(label, key=widget, shortcut=shortcut, type=kind, on_click=action,
                   width="stretch", disabled=disabled and label != "Undo")


def text_card(title: str, text: str, key: str) -> None:
    """A bordered box with a caption (an id) and a text shown as typed."""
    with st.container(border=True, key=key):
        st.caption(md_escape(title))
        st.markdown(md_escape(text))


def session_line(session: Session) -> str:
    c = session.counts
    return (f"This session: {c['yes']} yes · {c['no']} no · {c['skip']} skipped"
            + (f" · {len(session.history)} to undo" if session.history else ""))
