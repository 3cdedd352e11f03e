"""The web server around the pages: the door (login, cookie, sessions) and the st.App.

``serve.py`` builds one ``st.App`` from these parts; ``make run`` starts it.
This package is a front end like ``searchapp/ui/``, so it may import
streamlit and starlette (the server Streamlit runs on); the core never
imports it. Its modules:

- ``shared``: the process-wide App, worker keeper and warm-up thread, outside
  any Streamlit cache (no streamlit import: a JSON API can share them), and the
  server's lifespan, which stops the worker it started.
- ``cookies``, ``sessions``, ``throttle``: the signed cookie, the server-side
  session registry, the back-off on wrong passwords.
- ``identity``: who a request is (one function; a second credential kind plugs in there).
- ``door``: those parts together, once per process.
- ``middleware``, ``streamlit_sessions``: the pure-ASGI check in front of every
  request and websocket, and the binding of Streamlit's session ids to a login.
- ``login_page``, ``routes``: the login form, its POST, logout and the health check.
- ``boundary``: the app log and the one-line message for an unexpected error in a page.
"""
