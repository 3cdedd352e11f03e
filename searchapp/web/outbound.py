"""Nothing leaves the machine (no outside lookups); forwarded addresses from trusted proxies only.

Streamlit looks up the machine's outside address (``checkip.amazonaws.com``,
and a UDP socket towards 8.8.8.8 for the inside one) in two places: to print
"Network URL"/"External URL" when it listens on every interface, and to
judge a websocket whose ``Origin`` is not its ``Host``. The first is off
because ``.streamlit/config.toml`` names ``browser.serverAddress``; the
second never runs, because the site guard (``sites``) refuses a websocket
from another origin and hands Streamlit the ``Origin`` of the very host it
was asked for. ``no_outside_lookups`` also turns off usage statistics.

Uvicorn believes ``X-Forwarded-For`` from 127.0.0.1 unless told otherwise
(``FORWARDED_ALLOW_IPS``), which let anyone on this machine pick the address
the login throttle counts. ``trust_forwarding_from`` makes uvicorn believe
SEARCHAPP_TRUSTED_PROXIES only (none unless set): ``streamlit run`` builds
uvicorn's settings before it imports ``serve.py``, so the settings object
that is importing us is found on the stack and corrected before uvicorn
wraps the app; the environment variable is set too, for any server made later.

Example:
    >>> trust_forwarding_from(())                               # doctest: +SKIP
    False
"""

from __future__ import annotations

import inspect
import logging
import os
from typing import Any

from searchapp.config import trusted_proxies

log = logging.getLogger(__name__)


def trust_forwarding_from(proxies: tuple[str, ...] | None = None) -> bool:
    """Make uvicorn believe forwarding headers from ``proxies`` only (default:
    SEARCHAPP_TRUSTED_PROXIES, validated); True when the running server's settings were found.
    """
    proxies = trusted_proxies() if proxies is None else proxies
    value = ",".join(proxies)
    os.environ["FORWARDED_ALLOW_IPS"] = value
    found = False
    for frame in inspect.stack(context=0):
        owner = frame.frame.f_locals.get("self")
        if type(owner).__module__ == "uvicorn.config" and hasattr(owner, "forwarded_allow_ips"):
            owner.forwarded_allow_ips = list(proxies)
            owner.proxy_headers = bool(proxies)
            found = True
    if not found:
        log.info("no uvicorn settings on the stack; FORWARDED_ALLOW_IPS=%r for later ones", value)
    return found


def no_outside_lookups(streamlit_config: Any) -> None:
    """No usage statistics, and a named server address, so Streamlit never looks one up."""
    streamlit_config.set_option("browser.gatherUsageStats", False)
    if not streamlit_config.is_manually_set("browser.serverAddress"):
        streamlit_config.set_option("browser.serverAddress", "localhost")
