"""Parallel guardrails: a group of input processors that run concurrently, as validators.

Members may abort or continue, never change anything; the first abort cancels the others, so
the group costs its slowest passing member's time, not the sum. With ``with_model`` the group's
``process_input`` also runs alongside the run's first provider call, whose output is held until
every member has passed (the loop's ``Output.hold``). Members get ``process_input`` and
``process_input_step`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

GROUP_HOOKS = ("process_input", "process_input_step")


@dataclass(eq=False)
class ParallelGroup:
    members: list[Any]
    with_model: bool = False
    name: str = ""
    id: str = field(init=False)

    def __post_init__(self) -> None:
        self.id = f"parallel:{self.name or ','.join(str(getattr(m, 'id', m)) for m in self.members)}"

    def end_run(self, run_id: str) -> None:
        for m in self.members:
            end = getattr(m, "end_run", None)
            if callable(end):
                end(run_id)

    def skipped_processors(self) -> list[Any]:
        out: list[Any] = []
        for m in self.members:
            report = getattr(m, "skipped_processors", None)
            if callable(report):
                out.extend(report())
        return out


def group_refs(refs: Sequence[Any], resolve: Any) -> list[Any]:
    """Resolve ``refs``; consecutive refs with the same ``parallel_group`` become one group."""
    out: list[Any] = []
    for ref in refs:
        group = getattr(ref, "parallel_group", "")
        if not group:
            out.append(resolve(ref))
            continue
        last = out[-1] if out else None
        if isinstance(last, ParallelGroup) and last.name == group:
            last.members.append(resolve(ref))
            last.with_model = last.with_model or bool(getattr(ref, "with_model", False))
        else:
            out.append(ParallelGroup([resolve(ref)], bool(getattr(ref, "with_model", False)), group))
    return out


__all__ = ["GROUP_HOOKS", "ParallelGroup", "group_refs"]
