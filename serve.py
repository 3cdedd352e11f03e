"""The web server's entry: ``make run`` starts ``streamlit run serve.py``.

Streamlit finds ``app = st.App(...)`` below and serves it as an ASGI app: the
pages of ``app.py`` and the JSON API (``searchapp.api``, mounted at ``/api/v1``)
on one port, in one process, sharing one App (``searchapp.web.shared``: the
models and indexes are loaded once), behind the door (``searchapp.web``), which
checks every HTTP request and websocket before Streamlit or the API sees it:
a login cookie, or an API key for the API. The login form, logout and
``/healthz`` are the door's own routes; a page that fails shows one line
instead of a traceback. Files this process writes are private (umask 077), and
the worker it started is stopped when it shuts down (``lifespan``).

Listening beyond 127.0.0.1 (``--server.address 0.0.0.0``, or no address at all:
Streamlit's default is every interface) without a password or an API key is
refused here, at start, with a message saying how to set one.

Streamlit's pages get one script that names the server's base (``searchapp.web.base_hint``),
so the front end stops asking ``/<page>/_stcore/...`` first (two 404s per page load).

Before the door, the site guard (``searchapp.web.sites``) refuses a ``Host`` the server
does not answer to and a write or websocket from another origin, and the body limit
(``searchapp.web.body_limit``) a body over SEARCHAPP_MAX_REQUEST_BYTES. Uvicorn believes
``X-Forwarded-For`` only from SEARCHAPP_TRUSTED_PROXIES (``FORWARDED_ALLOW_IPS`` is set from
it here, before the server starts), and nothing here looks up an outside address
(``searchapp.web.outbound``).

Running ``streamlit run app.py`` instead serves the pages without the door:
with a password set, they then refuse to open and say to use this file.
"""

import contextlib
import sys

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config as streamlit_config

from searchapp.api.app import ApiDispatch, build_api
from searchapp.base.private_files import restrict_umask
from searchapp.config import allowed_hosts, max_request_bytes
from searchapp.errors import SearchAppError
from searchapp.web.base_hint import BaseHint
from searchapp.web.body_limit import BodyLimit, BodyLimits
from searchapp.web.boundary import install_app_log, on_script_error
from searchapp.web.door import install
from searchapp.web.feeds import feed_routes
from searchapp.web.middleware import DoorMiddleware
from searchapp.web.nodelay import set_nodelay_on_listeners
from searchapp.web.originals import original_routes
from searchapp.web.outbound import no_outside_lookups, trust_forwarding_from
from searchapp.web.reader import reader_routes
from searchapp.web.routes import door_routes
from searchapp.web.shared import lifespan
from searchapp.web.sites import HostPolicy, SiteGuard

restrict_umask()
door = install()
if door.settings is not None:
    door.settings.ensure_dirs()
    install_app_log(door.settings.data_dir)
refusal = door.listen_on(streamlit_config.get_option("server.address"))
try:
    hosts = HostPolicy.for_server(allowed_hosts(), door.beyond_loopback)
    limits = BodyLimits.for_server(max_request_bytes(),
                                   int(streamlit_config.get_option("server.maxUploadSize")))
    trust_forwarding_from()
except SearchAppError as exc:
    refusal = refusal or str(exc)
if refusal is not None:
    print(f"searchapp: {refusal}", file=sys.stderr, flush=True)
    raise SystemExit(2)
no_outside_lookups(streamlit_config)


@contextlib.asynccontextmanager
async def lifespan_with_nodelay(server):
    """Nagle's algorithm off on the port Streamlit bound (``web/nodelay.py``: 40 ms less per
    response on a kept-alive connection), then the shared lifespan (stops our worker)."""
    set_nodelay_on_listeners(int(streamlit_config.get_option("server.port")))
    async with lifespan(server):
        yield


app = st.App("app.py",
             routes=door_routes(door) + original_routes() + reader_routes() + feed_routes(),
             middleware=[Middleware(SiteGuard, hosts=hosts),
                         Middleware(BodyLimit, limits=limits),
                         Middleware(DoorMiddleware, door=door),
                         Middleware(ApiDispatch, api=build_api()),
                         Middleware(BaseHint, base_path=str(
                             streamlit_config.get_option("server.baseUrlPath") or ""))],
             on_script_error=on_script_error, lifespan=lifespan_with_nodelay)
