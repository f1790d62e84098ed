"""The garbage collector's settings for a serving process.

A server holds many runs at once, and each run keeps thousands of small objects alive for its
length (chunks, messages, protobuf, frames). With CPython's default thresholds (700, 10, 10) the
collector runs hundreds of times during a burst of 1000 concurrent runs and, several times, scans
every live object (a full collection) only to find almost nothing to free: about a second of
pauses in total. So once the server has started:

- ``gc.freeze()`` moves everything that exists by then (modules, the registry, the agents, the
  gRPC server) out of the collector's reach: those objects live as long as the process;
- the youngest generation is collected every 50,000 allocations instead of 700 (the older
  generations keep their ratios), so a burst pays for a few collections instead of hundreds.

Reference cycles are still collected, only in fewer, larger passes; memory freed by reference
counting (nearly all of it) is unaffected.
"""

from __future__ import annotations

import gc

THRESHOLDS = (50_000, 20, 10)

_tuned = False


def tune() -> None:
    """Freeze what exists now and raise the thresholds; once per process (later calls do nothing)."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
