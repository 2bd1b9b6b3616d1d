"""The admin app's page script (``app.py`` beside it serves it; ``agent-memory serve`` starts both).

Pages live in ``pages/``; their logic lives in ``admin_ui/``. Nobody sees a page before signing
in, and the menu holds only the pages the signed-in role may open.
"""

import streamlit as st

from admin_ui.auth.signin import current_identity, sync_cookie
from admin_ui.views.navigation import FAVICON, build_pages, sidebar, sign_in_pages

st.set_page_config(page_title="agent-memory admin", page_icon=FAVICON, layout="wide")

identity = current_identity()
if identity is None:
    # Every page's address shows the sign-in form, so a deep link (with its query parameters)
    # is still the page that opens once the person has signed in.
    page = st.navigation(sign_in_pages(), position="hidden")
else:
    page = st.navigation(build_pages(identity))
    sidebar(identity)
with st.sidebar if identity is not None else st.container():
    sync_cookie()
page.run()
