"""The Streamlit app: pages, shared helpers and process-wide resources.

Only this package, ``searchapp/web/`` and the entry files (``app.py``, ``serve.py``)
import streamlit; pages call the same core functions the CLI calls.
"""
