"""``python -m admin_ui.auth hash-password``: print an argon2 hash for an accounts file."""

import sys

from .accounts import main

sys.exit(main())
