"""Ambient profile: the preferences that may shape every answer, seen (and, by their owner, changed) here."""

import streamlit as st

from admin_ui.data import records
from admin_ui.runtime import get_service
from admin_ui.auth.signin import require_identity
from admin_ui.views.ambient import render_own_profile
from admin_ui.views.widgets import empty_state, md_escape, show_flash

identity = require_identity()
service = get_service()
st.title("My ambient profile" if identity.role == "user" else "Ambient profiles")
show_flash()

if identity.role == "user":
    user_id = identity.user_id
    st.caption(md_escape("Stable preferences an assistant may be given at the start of every conversation with you, "
                         "without searching: answer style, language, units, how to address you, accessibility needs. "
                         "Only what you stated, a trusted system set, or a reviewer approved; never a guess, never a "
                         "plan or a health detail. An assistant only gets it when its host turns the profile on."))
else:
    user_id = st.selectbox("User", records.known_users(service), index=None, key="profile_user",
                           placeholder="Choose a user")
    st.caption("Staff see a profile read-only; only its owner can remove an item.")
if not user_id:
    empty_state("Choose a user to see their ambient profile.")
    st.stop()
render_own_profile(service, identity, user_id)
