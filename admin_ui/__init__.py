"""The admin and inspection app: everything the Streamlit pages in ``pages/`` call.

Three kinds of module, one sub-package each: ``auth`` (accounts, sign-in, the server routes that
set the sign-in cookie), ``data`` (every read and change, as calls into the memory service; no SQL)
and ``views`` (Streamlit rendering). ``entry`` holds the two scripts Streamlit runs and ``runtime``
the one service factory. Pages stay thin (widgets in, a call here, results out), and every
mutation goes through the service with the signed-in identity as the actor and a reason.
"""

from memory_core.extras import require_extra

# `streamlit run app.py` without the app extra: one line naming it, before any page import fails.
require_extra("app", "the admin app")
