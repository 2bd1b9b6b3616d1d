"""How an ambient profile shows itself in Jupyter: its items with where each came from, and the
exact block the model reads (escaped: record text is untrusted)."""

from __future__ import annotations

from dataclasses import asdict

from . import markup as m
from .safe import safe_html

COLUMNS = ("record_id", "version", "category", "attribute", "scope", "source_kind", "basis", "tokens", "text")


@safe_html
def profile_html(profile) -> str:
    limits = profile.limits
    title = (f"Ambient profile · {len(profile.items)} item(s) · {profile.tokens} of {limits.get('max_tokens')} tokens · "
             f"max {limits.get('max_items')} items")
    return m.page(m.heading(title),
                  m.table([asdict(i) for i in profile.items], list(COLUMNS), long=["text"], empty="No record qualifies."),
                  m.details("the block in the prompt prefix", m.pairs({"block": profile.text or "(nothing is added)"}, long=["block"])),
                  m.details("left out", m.table(profile.excluded, empty="Nothing was left out.")))


def profile_frame(profile):
    import pandas as pd

    return pd.DataFrame([asdict(i) for i in profile.items], columns=list(COLUMNS))
