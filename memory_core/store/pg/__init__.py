"""The PostgreSQL + pgvector store backend (chosen by a ``postgresql://`` store target; see
:mod:`memory_core.store.backend` and docs/scaling.md)."""
