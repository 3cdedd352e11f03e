"""The Streamlit app: pages, shared helpers and process-wide resources.

Only this package and ``app.py`` import streamlit; pages call the same core
functions the CLI calls.
"""
