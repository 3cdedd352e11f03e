"""Streamlit entry point: page configuration, the password gate and navigation, nothing else.

Run with ``make run`` (or ``streamlit run app.py``); each page lives in
``searchapp/ui/pages/`` and gets the shared App from ``searchapp.ui.resources``.
With SEARCHAPP_PASSWORD (or _HASH) set, ``require_login`` stops every run at a
login form until the session has the password; the pages are only declared after it.
"""

import streamlit as st

from searchapp.ui.auth import logout_button, require_login

st.set_page_config(page_title="searchapp", page_icon=":material/manage_search:", layout="wide")
require_login()

PAGES = [
    st.Page("searchapp/ui/pages/upload.py", title="Upload", icon=":material/upload_file:",
            default=True),
    st.Page("searchapp/ui/pages/search.py", title="Search", icon=":material/search:"),
    st.Page("searchapp/ui/pages/duplicates.py", title="Duplicates",
            icon=":material/content_copy:"),
    st.Page("searchapp/ui/pages/label.py", title="Label", icon=":material/thumbs_up_down:"),
    st.Page("searchapp/ui/pages/clusters.py", title="Clusters", icon=":material/bubble_chart:"),
    st.Page("searchapp/ui/pages/models.py", title="Models", icon=":material/model_training:"),
    st.Page("searchapp/ui/pages/evaluate.py", title="Evaluate", icon=":material/analytics:"),
    st.Page("searchapp/ui/pages/jobs.py", title="Jobs", icon=":material/pending_actions:"),
]

logout_button()
st.navigation(PAGES).run()
