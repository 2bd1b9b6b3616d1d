"""What the store writes in place of forgotten text.

``REDACTED_REASON`` is the one value an audit event's reason may be changed to (the event log is
otherwise append-only). The schema's trigger was built with its own copy of this value
(``migrations_hardening``, ``pg/schema.py``: a migration never follows live code), and a test keeps
the three equal; live code (the erasure) takes it from here.
"""

from __future__ import annotations

# The event itself (kind, time, actor, record id) stays: forgetting erases the memory, not the
# fact that something was written and forgotten.
REDACTED_REASON = "[forgotten]"
