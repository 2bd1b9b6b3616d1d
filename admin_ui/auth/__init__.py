"""Who is signed in and what they may do: accounts and roles (``accounts``), the Streamlit side of
signing in (``signin``), and the server side that keeps sign-ins behind an HttpOnly cookie
(``sign_in_store``, ``routes``). Nothing here imports a view or the app's data layer.
"""

from .accounts import Identity, hash_password

__all__ = ["Identity", "hash_password"]
