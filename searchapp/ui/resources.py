"""Process-wide resources for the Streamlit app, shared by all sessions."""
import streamlit as st

from searchapp.context import App


@st.cache_resource(show_spinner=False)
def get_app() -> App:
    """The one App (database, model and index caches) of this Streamlit process."""
    return App()
