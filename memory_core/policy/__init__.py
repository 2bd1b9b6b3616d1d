"""Policy: scopes, grants and lifecycle rules, as pure functions over the store and settings."""

from .grants import Decision, ScopeAccess, check_grantable, resolve_access
from .rules import SOURCE_RANK, initial_status, may_supersede, normalise_attribute
from .scopes import Scope, parse_scope, private_scope, validate_id

__all__ = [
    "Decision", "SOURCE_RANK", "Scope", "ScopeAccess", "check_grantable", "initial_status",
    "may_supersede", "normalise_attribute", "parse_scope", "private_scope",
    "resolve_access", "validate_id",
]
