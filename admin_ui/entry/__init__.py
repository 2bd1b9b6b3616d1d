"""The two scripts Streamlit runs: ``app.py`` (the server, an ``st.App``) and ``page_script.py``.

They live in a folder of their own for two reasons. Streamlit treats a ``pages/`` folder beside
the script it runs as an old-style multipage app, so the page scripts (``pages/`` at the top of
the repository) must not sit here. And Streamlit puts this folder first on ``sys.path``, so
nothing but these two scripts should be importable from it by a bare name.
"""
