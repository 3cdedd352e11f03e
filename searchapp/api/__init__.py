"""The JSON API under ``/api/v1``: a front end like the pages and the CLI, on the same server.

``serve.py`` mounts ``build_api()`` beside the Streamlit pages in one ``st.App``:
one port, one process, one door (``searchapp.web``: a login cookie or an API key
on every request), one App with its loaded models and indexes
(``searchapp.web.shared``). Every endpoint calls the same service functions as
the CLI and the pages, and every error is an RFC 9457 problem with the CLI's
one-line message.

- ``app``: the FastAPI application, its error handlers and its local docs.
- ``schemas``: the request and response bodies (they make the OpenAPI document).
- ``problems``: ``SearchAppError`` classes to HTTP statuses, in one table.
- ``deps``: the App, who is asking (the door's Principal) and the write check.
- ``corpora``, ``documents``, ``search``, ``jobs``: the resources' routes.
- ``docs``: Swagger UI served from the installed package's files, no CDN.
"""
