"""One run's tool payloads as clients see them: projected chunks, results and stored parts.

The run itself only ever handles raw payloads. Each chunk the client would be sent carries its
``display`` projection beside it (``display_of``), computed once however many subscribers read
it; each stored tool invocation carries its ``transcript`` projection (``ToolInvocationPart.
transcript``), computed when it is written: a later change of the agent's rules does not rewrite
what a thread already showed, and a listing costs no projection. The edges (``Stream``,
``Generate``, ``SubscribeToThread``, ``ListMessages``) pick raw or projected per caller.

Chunks that wrap another run's chunks (a sub-agent's ``tool-output``) register in ``NESTED`` how
to reach the inner chunk; its display projection is then the wrapper around the projected inner
chunk (``None`` when the inner chunk is suppressed).
"""

from __future__ import annotations

import copy
import dataclasses
import json
from collections.abc import Callable
from typing import Any

from ..core.args import StepResult
from ..core.chunks import Chunk, ToolCall, ToolCallDelta, ToolResult
from ..core.messages import Message, ToolInvocationPart
from ..core.tool_payload import SUPPRESSED, ToolPayloadPolicy

NESTED: dict[str, tuple[Callable[[Chunk], Chunk], Callable[[Chunk, Chunk], Chunk]]] = {}
"""Chunk type -> (inner chunk of a wrapper, a copy of the wrapper around another inner chunk)."""

_ATTR = "_treadle_display"
_PASS, _PROJECT = object(), object()
_TOOL_CHUNKS = frozenset({"tool-call-delta", "tool-call", "tool-result", "tool-error", "step-finish"})


def display_of(chunk: Chunk) -> Chunk | None:
    """What a client without raw payload access is sent for ``chunk`` (None: nothing)."""
    return getattr(chunk, _ATTR, chunk)  # type: ignore[no-any-return]


def set_display(chunk: Chunk, shown: Chunk | None) -> None:
    """Record ``shown`` as ``chunk``'s display projection (a chunk relayed from another server)."""
    setattr(chunk, _ATTR, shown)


class PayloadView:
    """Projections of one run's tool payloads under the agent's ``policy``."""

    def __init__(self, policy: ToolPayloadPolicy) -> None:
        self.policy = policy
        self._deltas: dict[str, object] = {}
        """Per tool: what its argument deltas become (``_PASS``, ``SUPPRESSED`` or ``_PROJECT``),
        decided once: this runs for every streamed delta."""

    def __bool__(self) -> bool:
        return bool(self.policy)

    # --- display ------------------------------------------------------------------------------

    def mark(self, chunk: Chunk) -> None:
        """Attach ``chunk``'s display projection (only when it differs from the chunk)."""
        if chunk.type in _TOOL_CHUNKS or chunk.type in NESTED:
            shown = self.display_chunk(chunk)
            if shown is not chunk:
                set_display(chunk, shown)

    def display_chunk(self, chunk: Chunk) -> Chunk | None:
        t, p, project = chunk.type, chunk.payload, self.policy.project
        if t == "tool-call-delta":
            how = self._deltas.get(p.tool_name)
            if how is None:
                how = self._deltas[p.tool_name] = self._delta_mode(p.tool_name)
            if how is _PASS:
                return chunk
            if how is SUPPRESSED:
                return None
            shown = project("display", "input-delta", p.tool_name, p.args_text_delta)
            if shown is SUPPRESSED:
                return None
            if shown == p.args_text_delta:
                return chunk
            # Built directly: this runs once per streamed delta (dataclasses.replace is slower).
            return Chunk(t, ToolCallDelta(p.tool_call_id, _text(shown), p.tool_name), chunk.run_id,
                         chunk.from_, chunk.metadata)
        if t == "tool-call":
            if not self.policy.has_transform(p.tool_name, "display"):
                return chunk
            args = project("display", "input", p.tool_name, p.args)
            return None if args is SUPPRESSED else _with(chunk, args=args)
        if t == "tool-result":
            if not self.policy.has_transform(p.tool_name, "display"):
                return chunk
            result = project("display", "output", p.tool_name, p.result)
            if result is SUPPRESSED:
                return None
            return _with(chunk, result=result, args=self._args("display", p.tool_name, p.args))
        if t == "tool-error":
            if not self.policy.has_transform(p.tool_name, "display"):
                return chunk
            error = project("display", "error", p.tool_name, p.error, p.args)
            if error is SUPPRESSED:
                return None
            return _with(chunk, error=_text(error), args=self._args("display", p.tool_name, p.args))
        if t == "step-finish":
            calls = [self._call(c) for c in p.tool_calls]
            if all(a is b for a, b in zip(calls, p.tool_calls, strict=True)):
                return chunk
            return _with(chunk, tool_calls=calls)
        if t in NESTED:
            inner_of, wrap = NESTED[t]
            inner = inner_of(chunk)
            shown_inner = self.display_chunk(inner)
            if shown_inner is inner:
                return chunk
            return None if shown_inner is None else wrap(chunk, shown_inner)
        return chunk

    def _delta_mode(self, tool_name: str) -> object:
        phases = self.policy.phases(tool_name, "display")
        if phases is None:
            return _PASS
        return _PROJECT if "input-delta" in phases else SUPPRESSED

    def _args(self, target: str, tool_name: str, args: Any) -> Any:
        shown = self.policy.project(target, "input", tool_name, args)
        return None if shown is SUPPRESSED else shown

    def _call(self, call: ToolCall) -> ToolCall:
        if not self.policy.has_transform(call.tool_name, "display"):
            return call
        return ToolCall(call.tool_call_id, call.tool_name, self._args("display", call.tool_name, call.args))

    def display_steps(self, steps: list[StepResult]) -> list[StepResult]:
        """``Generate``'s steps as the client sees them."""
        if not self:
            return steps
        out = []
        for step in steps:
            results = []
            for r in step.tool_results:
                if not self.policy.has_transform(r.tool_name, "display"):
                    results.append(r)
                    continue
                phase = "error" if r.is_error else "output"
                value = self.policy.project("display", phase, r.tool_name, r.result, r.args)
                results.append(ToolResult(r.tool_call_id, r.tool_name, self._args("display", r.tool_name, r.args),
                                          None if value is SUPPRESSED else value, r.is_error))
            out.append(dataclasses.replace(step, tool_calls=[self._call(c) for c in step.tool_calls],
                                           tool_results=results))
        return out

    def display_messages(self, messages: list[Message]) -> list[Message]:
        """``Generate``'s response messages as the client sees them."""
        return [self._project_message(m, "display") for m in messages] if self else messages

    # --- transcript ---------------------------------------------------------------------------

    def annotate(self, messages: list[Message]) -> None:
        """Set the ``transcript`` projection of each tool invocation about to be stored."""
        if not self:
            return
        for message in messages:
            for part in message.content.parts:
                if isinstance(part, ToolInvocationPart):
                    part.transcript = self._projections(part, "transcript")

    def _projections(self, part: ToolInvocationPart, target: str) -> dict[str, Any] | None:
        if not self.policy.has_transform(part.tool_name, target):
            return None
        project = self.policy.project
        shown: dict[str, Any] = {"args": project(target, "input", part.tool_name, part.args)}
        if part.state == "output-error":
            shown["errorText"] = project(target, "error", part.tool_name, part.error_text, part.args)
            if part.result is not None:
                shown["result"] = project(target, "error", part.tool_name, _text(part.result), part.args)
        elif part.state == "result":
            shown["result"] = project(target, "output", part.tool_name, part.result)
        suppressed = sorted(k for k, v in shown.items() if v is SUPPRESSED)
        out = {k: v for k, v in shown.items() if v is not SUPPRESSED}
        if suppressed:
            out["suppressed"] = suppressed
        return out

    def _project_message(self, message: Message, target: str) -> Message:
        if not any(isinstance(p, ToolInvocationPart) for p in message.content.parts):
            return message
        parts = []
        for part in message.content.parts:
            if isinstance(part, ToolInvocationPart):
                part = apply_projection(part, self._projections(part, target))
            parts.append(part)
        return dataclasses.replace(message, content=dataclasses.replace(message.content, parts=parts))


def apply_projection(part: ToolInvocationPart, shown: dict[str, Any] | None) -> ToolInvocationPart:
    """``part`` with its payloads replaced by ``shown`` (a ``transcript``-shaped projection)."""
    if shown is None:
        return part
    gone = set(shown.get("suppressed", ()))
    return dataclasses.replace(
        part,
        args=None if "args" in gone else copy.deepcopy(shown.get("args", part.args)),
        result=None if "result" in gone else copy.deepcopy(shown.get("result", part.result)),
        error_text="" if "errorText" in gone else _text(shown.get("errorText", part.error_text)),
        transcript=None,
    )


def transcript_message(message: Message) -> Message:
    """A stored message as ``ListMessages`` shows it to a caller without raw payload access."""
    if not any(isinstance(p, ToolInvocationPart) and p.transcript is not None for p in message.content.parts):
        return message
    parts = [apply_projection(p, p.transcript) if isinstance(p, ToolInvocationPart) else p
             for p in message.content.parts]
    return dataclasses.replace(message, content=dataclasses.replace(message.content, parts=parts))


def _with(chunk: Chunk, **changes: Any) -> Chunk:
    return dataclasses.replace(chunk, payload=dataclasses.replace(chunk.payload, **changes))


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
