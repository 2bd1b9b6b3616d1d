"""The optional parts of agent-memory and the extra that installs each (``pip install 'agent-memory[app]'``).

A part that needs a package outside the default install calls :func:`require_extra` before it
starts, so a person gets one line naming the extra instead of an ImportError deep in a traceback.
The table mirrors ``[project.optional-dependencies]`` in pyproject.toml (a test keeps them in step).
"""

from __future__ import annotations

import importlib.util
import sys

from .errors import MissingExtraError

# extra -> the top-level modules it provides (import names, not distribution names)
EXTRAS: dict[str, tuple[str, ...]] = {
    "app": ("streamlit", "plotly", "pandas", "argon2"),
    "postgres": ("psycopg",),
    "bge": ("FlagEmbedding",),
    "openai": ("openai",),
    "mcp": ("mcp",),
    "otel": ("opentelemetry",),
    "deepagents": ("deepagents",),
    "crewai": ("crewai",),
}


def missing_modules(modules: tuple[str, ...] | list[str]) -> list[str]:
    """The modules of ``modules`` that cannot be imported here (checked without importing them)."""
    missing = []
    for name in modules:
        if name in sys.modules:
            if sys.modules[name] is None:  # how Python marks a module as not importable
                missing.append(name)
            continue
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


def install_hint(extra: str) -> str:
    """The command that installs ``extra``."""
    return f"pip install 'agent-memory[{extra}]'"


def require_extra(extra: str, purpose: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise MissingExtraError (one line: what is missing, and the install command) unless every
    module of ``extra`` (or of ``modules``) is importable."""
    missing = missing_modules(modules if modules is not None else EXTRAS[extra])
    if missing:
        raise MissingExtraError(f"{purpose} cannot run without {', '.join(missing)}, which is not installed: "
                                f"{install_hint(extra)}",
                                extra=extra, missing=missing)
