"""The admin and inspection app's logic: everything the Streamlit pages call.

Pages in ``app_pages/`` stay thin (widgets in, a call here, results out). Nothing in this package
bypasses :mod:`memory_core` for a change: every mutation goes through the service with the
signed-in identity as the actor and a reason.
"""

from memory_core.extras import require_extra

# `streamlit run app.py` without the app extra: one line naming it, before any page import fails.
require_extra("app", "the admin app")
