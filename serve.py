"""The web server's entry: ``make run`` starts ``streamlit run serve.py``.

Streamlit finds ``app = st.App(...)`` below and serves it as an ASGI app: the
pages of ``app.py`` behind the door (``searchapp.web``), which checks every
HTTP request and websocket before Streamlit sees it, with the login form,
logout and ``/healthz`` as the door's own routes, and one line instead of a
traceback when a page fails. Files this process writes are private (umask 077), and
the worker it started is stopped when it shuts down (``lifespan``).

Running ``streamlit run app.py`` instead serves the pages without the door:
with a password set, they then refuse to open and say to use this file.
"""

import streamlit as st
from starlette.middleware import Middleware

from searchapp.private_files import restrict_umask
from searchapp.web.boundary import install_app_log, on_script_error
from searchapp.web.door import install
from searchapp.web.middleware import DoorMiddleware
from searchapp.web.routes import door_routes
from searchapp.web.shared import lifespan

restrict_umask()
door = install()
if door.settings is not None:
    door.settings.ensure_dirs()
    install_app_log(door.settings.data_dir)

app = st.App("app.py", routes=door_routes(door), middleware=[Middleware(DoorMiddleware, door=door)],
             on_script_error=on_script_error, lifespan=lifespan)
