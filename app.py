"""agent-memory admin app: ``streamlit run app.py`` (or ``agent-memory serve``).

Pages live in ``pages/``; their logic lives in ``admin_ui/``. Nobody sees a page before signing
in, and the menu holds only the pages the signed-in role may open.
"""

import streamlit as st

from admin_ui.navigation import build_pages, sidebar
from admin_ui.signin import current_identity, render_sign_in

st.set_page_config(page_title="agent-memory admin", page_icon=":material/memory:", layout="wide")

identity = current_identity()
if identity is None:
    page = st.navigation([st.Page(render_sign_in, title="Sign in", icon=":material/login:", url_path="sign-in")])
else:
    page = st.navigation(build_pages(identity))
    sidebar(identity)
page.run()
