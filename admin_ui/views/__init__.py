"""The app's views: Streamlit rendering of what :mod:`admin_ui.data` hands them.

Memory content and every other untrusted text is shown as text only (``widgets``). Views never
call the memory service themselves: they pass it on to a ``data`` function (a test checks).
"""
