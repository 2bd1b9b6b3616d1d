"""The app's data layer: every read and change a page makes, as calls into the memory service.

No SQL and no store access here: lists, counts and series come from the service's admin methods
(``memory_core/service/admin_methods.py``, which delegate to named queries in ``memory_core/store``),
and every change goes through the service with the signed-in identity as the actor and a reason
(``actions``). Nothing here draws anything, so it is tested without Streamlit.
"""
