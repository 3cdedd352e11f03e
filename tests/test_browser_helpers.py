"""``tests/browser.py:pick_files``, the browser tests' way to choose files, on a stand-in page.

Its two guards decide whether a browser test passes honestly: an uploader that took no
file is reloaded and picked once more, and an uploader that holds the file without the
button it brings fails at once (no second pick hides it). A stand-in page, no browser:
the branches are what is tested, not Streamlit.
"""

from __future__ import annotations

import pytest

from tests.browser import FILE_CHIP, IDLE, pick_files

sync_api = pytest.importorskip("playwright.sync_api")


class Located:
    def __init__(self, page, what: str):
        self.page, self.what = page, what

    def set_input_files(self, files) -> None:
        self.page.calls.append(("pick", files))
        self.page.taken = self.page.outcomes.pop(0)

    def wait_for(self, timeout: float) -> None:
        self.page.calls.append(("wait-button", self.what))
        if self.page.taken != "taken":
            raise sync_api.TimeoutError(f"no {self.what!r} within {timeout} ms")

    def count(self) -> int:
        return int(self.page.taken == "held")


class StandInPage:
    """A page whose uploader answers each pick with the next of ``outcomes``: 'taken' (the
    button comes), 'held' (the file shows, no button), 'lost' (nothing)."""

    def __init__(self, outcomes: list[str]):
        self.outcomes, self.taken, self.calls = outcomes, None, []

    def wait_for_selector(self, selector: str, timeout: float) -> None:
        assert selector == IDLE
        self.calls.append(("idle",))

    def locator(self, selector: str) -> Located:
        assert selector in ("input[type=file]", FILE_CHIP)
        return Located(self, selector)

    def get_by_role(self, role: str, name: str) -> Located:
        assert role == "button"
        return Located(self, name)

    def reload(self) -> None:
        self.calls.append(("reload",))
        self.taken = None


def test_a_file_taken_at_once_is_picked_once():
    page = StandInPage(["taken"])
    pick_files(page, "a.csv", "Upload and embed")
    assert page.calls == [("idle",), ("pick", "a.csv"), ("wait-button", "Upload and embed")]


def test_an_uploader_that_took_nothing_is_reloaded_reopened_and_picked_again():
    page, reopened = StandInPage(["lost", "taken"]), []
    pick_files(page, "p.tsv", "Compute", reopen=lambda p: reopened.append(p.calls[-1]))
    picks = [c for c in page.calls if c[0] == "pick"]
    assert len(picks) == 2 and reopened == [("reload",)]
    assert page.calls[-3:] == [("idle",), ("pick", "p.tsv"), ("wait-button", "Compute")]


def test_a_held_file_without_its_button_fails_without_a_second_pick():
    page = StandInPage(["held", "taken"])
    with pytest.raises(sync_api.TimeoutError):
        pick_files(page, "p.tsv", "Compute")
    assert [c for c in page.calls if c[0] in ("pick", "reload")] == [("pick", "p.tsv")]


def test_a_second_loss_fails():
    page = StandInPage(["lost", "lost"])
    with pytest.raises(sync_api.TimeoutError):
        pick_files(page, "p.tsv", "Compute")
    assert [c[0] for c in page.calls].count("pick") == 2
