"""A desktop notification where the app runs on its user's machine: ``notify-send`` on
Linux, ``osascript`` on macOS, when the program is there and a desktop session is
(``DISPLAY``, ``WAYLAND_DISPLAY`` or ``DBUS_SESSION_BUS_ADDRESS`` set; macOS: its own).
Otherwise it is skipped, and the outcome says why. Runs on the sender's thread.

Example:
    >>> notify("t", "b", env={}, which=lambda name: None)["skipped"]
    'no notify-send or osascript on this machine'
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping

SESSION_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS")
TIMEOUT = 5.0
_APPLESCRIPT = ("on run argv", "display notification (item 2 of argv) with title (item 1 of argv)",
                "end run")


def command(title: str, body: str, env: Mapping[str, str], which: Callable = shutil.which,
            platform: str = sys.platform) -> tuple[list[str] | None, str]:
    """(the command to run, or None; why not)."""
    if platform == "darwin" and which("osascript"):
        script = [arg for line in _APPLESCRIPT for arg in ("-e", line)]
        return ["osascript", *script, title, body], ""
    program = which("notify-send")
    if program is None:
        return None, "no notify-send or osascript on this machine"
    if not any(env.get(v) for v in SESSION_VARIABLES):
        return None, f"no desktop session ({', '.join(SESSION_VARIABLES)} unset)"
    return [program, "--app-name=searchapp", "--", title, body], ""


def notify(title: str, body: str, env: Mapping[str, str] | None = None,
           which: Callable = shutil.which) -> dict:
    """Show the notification; the outcome: ``{"shown": True}``, ``{"skipped": why}`` or
    ``{"error": ...}``."""
    argv, why = command(title, body, os.environ if env is None else env, which)
    if argv is None:
        return {"skipped": why}
    try:
        done = subprocess.run(argv, capture_output=True, timeout=TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": f"{argv[0]} failed: {exc}"}
    if done.returncode:
        return {"error": f"{argv[0]} exited {done.returncode}: "
                         f"{done.stderr.decode(errors='replace').strip()[:200]}"}
    return {"shown": True}
