"""What a run records of its steps and processor hooks when it ends: each step's start and end
time, finish reason, usage and model, and each processor hook's invocations aggregated per step,
processor and hook (a count, the time they took added up, and how they ended, counted by outcome).

Never one row per chunk: a ``processOutputStream`` that saw 300 chunks in a step is one entry
with ``count`` 300. The record is a plain JSON-able dict (``RunStats.detail``), stored with the
run and read back by ``ListRuns`` as the ``Run``'s ``steps`` and ``hooks``.
"""

from __future__ import annotations

import time
from dataclasses import fields
from typing import Any

from ..core.chunks import Usage


_USAGE_FIELDS = tuple(f.name for f in fields(Usage))
"""``asdict(usage)`` without its recursive walk (a usage holds numbers only)."""


class RunStats:
    """The steps and hook invocations of one run, as they happen."""

    def __init__(self) -> None:
        self.step = 0
        """The current step, from 1; 0 outside any step (``processInput``, ``processOutputResult``)."""
        self.steps: list[dict[str, Any]] = []
        self._started = 0
        self._hooks: dict[tuple[int, str, str], dict[str, Any]] = {}
        self._live: dict[int, Any] = {}
        """Counters of hot hooks (``processOutputStream``) that add to their entry when flushed."""

    def begin_step(self, number: int) -> None:
        self.step = number
        self._started = time.time_ns() // 1000

    def end_step(self, finish_reason: str, usage: Usage | None, model: str) -> None:
        if not self.step:
            return
        self.steps.append({
            "number": self.step, "started_us": self._started, "ended_us": time.time_ns() // 1000,
            "finish_reason": finish_reason,
            "usage": {name: getattr(usage, name) for name in _USAGE_FIELDS} if usage is not None else {},
            "model": model,
        })
        self.step = 0

    def hook(self, processor_id: str, hook: str, seconds: float, outcome: str) -> None:
        """One invocation of ``processor_id``'s ``hook`` (its seed name) that took ``seconds``."""
        entry = self.entry(processor_id, hook)
        entry["count"] += 1
        entry["seconds"] += seconds
        outcomes = entry["outcomes"]
        outcomes[outcome] = outcomes.get(outcome, 0) + 1

    def entry(self, processor_id: str, hook: str) -> dict[str, Any]:
        """The current step's entry of ``processor_id``'s ``hook``, for a caller that counts its
        invocations itself (``count``, ``seconds``, ``outcomes``) as ``hook`` would."""
        key = (self.step, processor_id, hook)
        entry = self._hooks.get(key)
        if entry is None:
            entry = self._hooks[key] = {"step": self.step, "processor_id": processor_id, "hook": hook,
                                        "count": 0, "seconds": 0.0, "outcomes": {}}
        return entry

    def track(self, counter: Any) -> None:
        """``counter.flush()`` adds its counts to its entry; ``detail`` flushes it first."""
        self._live[id(counter)] = counter

    def untrack(self, counter: Any) -> None:
        self._live.pop(id(counter), None)

    def detail(self) -> dict[str, Any]:
        for counter in list(self._live.values()):
            counter.flush()
        return {"steps": list(self.steps), "hooks": list(self._hooks.values())}
