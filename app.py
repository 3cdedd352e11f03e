"""The pages' script: page configuration, the second lock and navigation, nothing else.

``make run`` serves it through ``serve.py`` (``st.App("app.py", ...)``), whose door
checks the password before any request reaches Streamlit. Each page lives in
``searchapp/ui/pages/`` and gets the shared App from ``searchapp.ui.resources``.
With SEARCHAPP_PASSWORD (or _HASH) set, ``require_login`` also stops every run that
did not come through that door with a live login; the pages are only declared after it.
"""

import streamlit as st

from searchapp.ui.auth import logout_button, require_login
from searchapp.ui.common import text_direction
from searchapp.ui.jobs_indicator import jobs_indicator
from searchapp.ui.resources import get_app
from searchapp.ui.welcome import APP_NAME, ICON, open_page_in_other_case, say_unknown_address

# The icon is a file served by the app (a Material icon here is fetched from fonts.gstatic.com).
st.set_page_config(page_title=APP_NAME, page_icon=ICON, layout="wide")
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
    st.Page("searchapp/ui/pages/documents.py", title="Documents", icon=":material/description:"),
    st.Page("searchapp/ui/pages/jobs.py", title="Jobs", icon=":material/pending_actions:"),
    st.Page("searchapp/ui/pages/settings.py", title="Settings", icon=":material/settings:"),
    st.Page("searchapp/ui/pages/guide.py", title="Guide", icon=":material/menu_book:"),
]

logout_button()
text_direction()  # every page: each paragraph in its own script's direction
page = st.navigation({APP_NAME: PAGES})  # the section's title names the app in the sidebar
meant = open_page_in_other_case(PAGES)  # /Jobs opens the Jobs page (once, as the session opens)
if meant is not None and meant is not page:
    st.switch_page(meant)
say_unknown_address(["", *(p.url_path for p in PAGES)], page.title)  # not silently Upload
jobs_indicator(get_app())  # every page: what runs, what failed
page.run()
