"""Where the app's memory service and settings come from: one ``@st.cache_resource`` factory.

The store, and two test hooks, are read from the environment so ``streamlit run``, AppTest and
the Playwright server all build the service the same way:

- ``MEMORY_STORE``: the store file (default ``var/memory.sqlite``); ``agent-memory serve`` sets it.
- ``MEMORY_UI_CLOCK``: an ISO timestamp that pins the service clock. Without it, a demo store
  (one whose metadata holds ``demo_now``) is opened at that moment, so its review flags, expiries
  and "now" match the story the demo tells; any other store runs on the system clock.
- ``MEMORY_UI_EMBEDDER``: ``module:Class`` of an embedder to use instead of the configured model
  (tests use ``tests.fakes:HashingEmbedder``).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

import streamlit as st

from memory_core import FixedClock, MemoryService, load_settings
from memory_core.app_launch import CLOCK_ENV, EMBEDDER_ENV, STORE_ENV
from memory_core.settings import Settings

__all__ = ["CLOCK_ENV", "EMBEDDER_ENV", "STORE_ENV"]
DEFAULT_STORE = "var/memory.sqlite"


@dataclass(frozen=True)
class RuntimeConfig:
    """How to open the service; hashable so it can key the resource cache."""

    store: str
    clock: str | None = None
    embedder: str | None = None


def runtime_config() -> RuntimeConfig:
    """The service configuration from the environment."""
    return RuntimeConfig(
        store=os.environ.get(STORE_ENV) or DEFAULT_STORE,
        clock=os.environ.get(CLOCK_ENV) or None,
        embedder=os.environ.get(EMBEDDER_ENV) or None,
    )


def _load_class(spec: str):
    module_name, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def open_service(config: RuntimeConfig, settings: Settings | None = None) -> MemoryService:
    """Open the store described by ``config`` (uncached; the factory below caches it)."""
    pinned = config.clock or MemoryService.stored_demo_now(config.store)
    clock = FixedClock(pinned) if pinned else None
    embedder = _load_class(config.embedder)() if config.embedder else None
    return MemoryService.open(config.store, settings or load_settings(), clock=clock, embedder=embedder)


@st.cache_resource(show_spinner="Opening the memory store and loading the embedding model…")
def _cached_service(config: RuntimeConfig) -> MemoryService:
    return open_service(config)


def get_service() -> MemoryService:
    """The app's one memory service for the configured store (shared by every session)."""
    return _cached_service(runtime_config())


def get_settings() -> Settings:
    """Settings from the environment, read on each run (cheap, and tests can vary them)."""
    return load_settings()
