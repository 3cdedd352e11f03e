"""The app's name, its icon, and what a newcomer reads first.

The icon is a file of the package (``static/icon.png``), served by the app
itself: a Material icon as ``page_icon`` makes every browser fetch it from
fonts.gstatic.com, and nothing is to leave the machine.

Example (in app.py):
    >>> st.set_page_config(page_title=APP_NAME, page_icon=ICON)   # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

APP_NAME = "searchapp"
ICON = str(Path(__file__).resolve().parent / "static" / "icon.png")
STEPS = [
    ("Search", ":material/search:", "find documents by what they mean, by their words or "
     "both, filtered by their metadata; every search is a link you can bookmark or share"),
    ("Duplicates", ":material/content_copy:", "every pair and group of documents that say "
     "the same thing, and a check of a new text before it is added"),
    ("Clusters", ":material/bubble_chart:", "a map of what the pile is about: named groups "
     "you can click, lasso and export"),
    ("Models", ":material/model_training:", "fine-tune the encoder on your own labelled pairs "
     "and switch a corpus to it"),
]


def welcome() -> None:
    """What the app is for and what comes after the upload (the first screen of a new user)."""
    st.markdown(
        f"**{APP_NAME}** searches a pile of text (support questions, tickets, papers, FAQs) "
        "by meaning, on this machine: nothing you upload leaves it. Start by uploading a "
        "file below, or the sample corpus. Once it is embedded (a bar shows the progress), "
        "the other pages open on it:")
    st.markdown("\n".join(f"- {icon} **{name}**: {what}." for name, icon, what in STEPS))


CASE_CHECKED = "welcome.case_checked"  # the first address was looked at for /Jobs
UNKNOWN_SAID = "welcome.unknown-address-said"  # this session was told once


def unknown_address(requested: str, known: list[str], shown: str) -> str | None:
    """What to say when the address names no page (Streamlit then runs the default page
    without a word), or None. ``requested`` is the address' path, ``known`` the pages'
    url paths, ``shown`` the title of the page run instead.

    Example:
        >>> print(unknown_address("/serach", ["", "search"], "Upload"))
        There is no page at /serach: this is the Upload page. The pages are in the sidebar.
        >>> unknown_address("/search", ["", "search"], "Search") is None
        True
    """
    name = requested.strip("/").split("/")[-1] if requested.strip("/") else ""
    if name.lower() in {k.lower() for k in known}:  # /Jobs opens the Jobs page
        return None
    return (f"There is no page at /{name}: this is the {shown} page. The pages are in the "
            "sidebar.")


def page_in_other_case(requested: str, known: list[str]) -> str | None:
    """The url path of the page an address names in another case (``/Jobs`` for ``jobs``;
    people type page names as the sidebar writes them), or None.

    Example:
        >>> page_in_other_case("/Jobs", ["", "jobs", "search"])
        'jobs'
        >>> page_in_other_case("/jobs", ["", "jobs"]) is None, page_in_other_case("/x", ["jobs"])
        (True, None)
    """
    name = requested.strip("/").split("/")[-1] if requested.strip("/") else ""
    if not name or name in known:
        return None
    return next((k for k in known if k and k.lower() == name.lower()), None)


def open_page_in_other_case(pages: list) -> object | None:
    """The page (of ``pages``) the session's first address names in another case, or None;
    asked once per session, so the sidebar's links work as usual after it."""
    if st.session_state.get(CASE_CHECKED):
        return None
    st.session_state[CASE_CHECKED] = True
    from urllib.parse import urlsplit

    wanted = page_in_other_case(urlsplit(st.context.url or "/").path,
                                [p.url_path for p in pages])
    return next((p for p in pages if p.url_path == wanted), None) if wanted else None


def say_unknown_address(known: list[str], shown: str) -> None:
    """Tell the session once when the address it opened names no page."""
    if st.session_state.get(UNKNOWN_SAID):
        return
    st.session_state[UNKNOWN_SAID] = True
    from urllib.parse import urlsplit

    words = unknown_address(urlsplit(st.context.url or "/").path, known, shown)
    if words:
        st.warning(words, icon=":material/link_off:")
