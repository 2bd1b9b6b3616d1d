"""OpenTelemetry spans for the library's operations (docs/observability.md).

:class:`Telemetry` holds the tracer (from the host's provider, or none); :mod:`.spans` names each
operation's span and builds its attributes. Only this package imports ``opentelemetry`` (an
import-linter contract), and it works without it: tracing is then simply off.
"""

from . import spans
from .tracing import NO_SCOPE, NO_TELEMETRY, NoScope, Scope, Telemetry, error_code

__all__ = ["NO_SCOPE", "NO_TELEMETRY", "NoScope", "Scope", "Telemetry", "error_code", "spans"]
