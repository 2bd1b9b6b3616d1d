"""Host-issued conditional memory for ``hybrid`` mode (design sections 2, 3 and 7; docs/host-memory.md).

For each user turn the host finds the information gaps the turn leaves, searches against them
through the normal search path, and admits a result only when it improves on a draft answered
without it; every decision is logged in ``host_memory_decisions``. A host may turn it on only with a
passing, recorded fitness result for exactly what it runs (:func:`require_fitness`).

The package sits between the adapters (which call it) and the service (whose search it uses).
"""

from .decider import Decision, HostMemory, decider_name, decisions_for
from .fitness import FITNESS_COMMAND, FitnessResult, fingerprint, fitness_results, open_host_memory, require_fitness, run_fitness

__all__ = ["Decision", "FITNESS_COMMAND", "FitnessResult", "HostMemory", "decider_name", "decisions_for", "fingerprint",
           "fitness_results", "open_host_memory", "require_fitness", "run_fitness"]
