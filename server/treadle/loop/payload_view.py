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
import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..core.args import StepResult, TransformToolPayloadArgs
from ..core.chunks import Chunk, ErrorPayload, ToolCall, ToolCallDelta, ToolResult
from ..core.messages import Message, ToolInvocationPart
from ..core.processor import wants_tool
from ..core.tool_payload import SUPPRESSED, ToolPayloadPolicy, failed, scrub
from ..processors.runner import ChainRunner

log = logging.getLogger(__name__)
HOOK = "transform_tool_payload"

NESTED: dict[str, tuple[Callable[[Chunk], Chunk], Callable[[Chunk, Chunk], Chunk]]] = {}
"""Chunk type -> (inner chunk of a wrapper, a copy of the wrapper around another inner chunk)."""

_ATTR = "_treadle_display"
_PASS, _PROJECT = object(), object()
_TOOL_CHUNKS = frozenset({"tool-call-delta", "tool-call", "tool-result", "tool-error", "step-finish", "error"})


def display_of(chunk: Chunk) -> Chunk | None:
    """What a client without raw payload access is sent for ``chunk`` (None: nothing)."""
    return getattr(chunk, _ATTR, chunk)  # type: ignore[no-any-return]


def set_display(chunk: Chunk, shown: Chunk | None) -> None:
    """Record ``shown`` as ``chunk``'s display projection (a chunk relayed from another server)."""
    setattr(chunk, _ATTR, shown)


class PayloadView:
    """Projections of one run's tool payloads: the agent's declarative ``policy``, then its
    ``processors`` serving ``transform_tool_payload`` (remote ones too), in order.

    A remote projection is computed once per target, phase and tool call, whichever egress asks
    first; a processor that fails, is not attached, or yields nothing gives the placeholder.
    """

    def __init__(self, policy: ToolPayloadPolicy, processors: Sequence[Any] = ()) -> None:
        self.policy = policy
        self.processors = list(processors)
        self._chain: ChainRunner | None = None
        self._cache: dict[tuple[str, str, str], Any] = {}
        self._transformed_args: list[Any] = []
        """The raw arguments of this run's calls of tools with a display transform: a run error
        that quotes them (a tool hook's failure, say) is scrubbed of them too."""
        self._deltas: dict[str, object] = {}
        """Per tool: what its argument deltas become (``_PASS``, ``SUPPRESSED`` or ``_PROJECT``),
        decided once: this runs for every streamed delta."""

    def __bool__(self) -> bool:
        return bool(self.policy) or bool(self.processors)

    def bind(self, chain: ChainRunner) -> None:
        """The run's chain runner, through which the transform processors are invoked."""
        self._chain = chain

    def _remote(self, tool_name: str) -> list[Any]:
        return [p for p in self.processors if wants_tool(p, HOOK, tool_name)]

    def has_transform(self, tool_name: str, target: str) -> bool:
        return self.policy.has_transform(tool_name, target) or bool(self._remote(tool_name))

    async def project(self, target: str, phase: str, tool_name: str, tool_call_id: str, value: Any,
                      args: Any = None) -> Any:
        """``value`` as ``target`` shows it in ``phase`` (``SUPPRESSED``: not at all)."""
        remote = self._remote(tool_name) if self.processors else []
        if not remote:
            return self.policy.project(target, phase, tool_name, value, args)
        key = (target, phase, tool_call_id)
        if key in self._cache:
            return self._cache[key]
        if self.policy.has_transform(tool_name, target):
            out = self.policy.project(target, phase, tool_name, value, args)
        else:
            out = scrub(str(value), args) if phase == "error" else value
        for processor in remote:
            if out is SUPPRESSED:
                break
            out = await self._invoke(processor, target, phase, tool_name, tool_call_id, out)
        self._cache[key] = out
        return out

    async def _invoke(self, processor: Any, target: str, phase: str, tool_name: str, tool_call_id: str,
                      payload: Any) -> Any:
        if self._chain is None:
            return failed(phase)
        try:
            result = await self._chain.run_tool_hook(
                [processor], HOOK, tool_name,
                lambda p, c: TransformToolPayloadArgs(target=target, phase=phase, tool_name=tool_name,
                                                      tool_call_id=tool_call_id, payload=payload, **c),
                stop=lambda _: True,
            )
        except Exception:  # noqa: BLE001 - fail closed: unreachable, timed out, failed, aborted
            log.info("transformToolPayload of %s failed for %s; the placeholder is shown", processor.id, tool_name,
                     exc_info=True)
            return failed(phase)
        if result is None:
            return failed(phase)
        return _text(result) if phase == "error" else result

    # --- display ------------------------------------------------------------------------------

    def marks(self, chunk: Chunk) -> bool:
        """Whether ``chunk`` may carry a tool payload (``mark`` has work to do)."""
        return chunk.type in _TOOL_CHUNKS or chunk.type in NESTED

    def mark_delta(self, chunk: Chunk) -> None:
        """The hot path: an argument delta's display projection (declarative rules only)."""
        shown = self._delta(chunk)
        if shown is not chunk:
            set_display(chunk, shown)

    async def mark(self, chunk: Chunk) -> None:
        """Attach ``chunk``'s display projection (only when it differs from the chunk)."""
        shown = await self.display_chunk(chunk)
        if shown is not chunk:
            set_display(chunk, shown)

    def _delta(self, chunk: Chunk) -> Chunk | None:
        p = chunk.payload
        how = self._deltas.get(p.tool_name)
        if how is None:
            how = self._deltas[p.tool_name] = self._delta_mode(p.tool_name)
        if how is _PASS:
            return chunk
        if how is SUPPRESSED:
            return None
        shown = self.policy.project("display", "input-delta", p.tool_name, p.args_text_delta)
        if shown is SUPPRESSED:
            return None
        if shown == p.args_text_delta:
            return chunk
        # Built directly: this runs once per streamed delta (dataclasses.replace is slower).
        return Chunk(chunk.type, ToolCallDelta(p.tool_call_id, _text(shown), p.tool_name), chunk.run_id,
                     chunk.from_, chunk.metadata)

    def _delta_mode(self, tool_name: str) -> object:
        if not self.has_transform(tool_name, "display"):
            return _PASS
        phases = self.policy.phases(tool_name, "display")
        return _PROJECT if phases is not None and "input-delta" in phases else SUPPRESSED

    async def display_chunk(self, chunk: Chunk) -> Chunk | None:
        t, p = chunk.type, chunk.payload
        if t == "tool-call-delta":
            return self._delta(chunk)
        if t in ("tool-call", "tool-result", "tool-error"):
            if not self.has_transform(p.tool_name, "display"):
                return chunk
            args = await self.project("display", "input", p.tool_name, p.tool_call_id, p.args)
            if t == "tool-call":
                self._transformed_args.append(p.args)
                return None if args is SUPPRESSED else _with(chunk, args=args)
            args = None if args is SUPPRESSED else args
            if t == "tool-result":
                result = await self.project("display", "output", p.tool_name, p.tool_call_id, p.result)
                return None if result is SUPPRESSED else _with(chunk, result=result, args=args)
            error = await self.project("display", "error", p.tool_name, p.tool_call_id, p.error, p.args)
            return None if error is SUPPRESSED else _with(chunk, error=_text(error), args=args)
        if t == "error":
            error = self.display_error(p)
            return chunk if error is p else Chunk(t, error, chunk.run_id, chunk.from_, chunk.metadata)
        if t == "step-finish":
            calls = [await self._call(c) for c in p.tool_calls]
            if all(a is b for a, b in zip(calls, p.tool_calls, strict=True)):
                return chunk
            return _with(chunk, tool_calls=calls)
        if t in NESTED:
            inner_of, wrap = NESTED[t]
            inner = inner_of(chunk)
            own = display_of(inner)  # as the inner run's own rules showed it
            if own is None:
                return None
            shown_inner = await self.display_chunk(own)
            if shown_inner is inner:
                return chunk
            return None if shown_inner is None else wrap(chunk, shown_inner)
        return chunk

    def display_error(self, error: ErrorPayload) -> ErrorPayload:
        """A run's error as the client sees it: without the raw arguments of transformed calls."""
        message = error.message
        for raw in self._transformed_args:
            message = scrub(message, raw)
        return error if message == error.message else dataclasses.replace(error, message=message)

    async def _args(self, target: str, tool_name: str, tool_call_id: str, args: Any) -> Any:
        shown = await self.project(target, "input", tool_name, tool_call_id, args)
        return None if shown is SUPPRESSED else shown

    async def _call(self, call: ToolCall) -> ToolCall:
        if not self.has_transform(call.tool_name, "display"):
            return call
        return ToolCall(call.tool_call_id, call.tool_name,
                        await self._args("display", call.tool_name, call.tool_call_id, call.args))

    async def display_steps(self, steps: list[StepResult]) -> list[StepResult]:
        """``Generate``'s steps as the client sees them."""
        if not self:
            return steps
        out = []
        for step in steps:
            results = []
            for r in step.tool_results:
                if not self.has_transform(r.tool_name, "display"):
                    results.append(r)
                    continue
                phase = "error" if r.is_error else "output"
                value = await self.project("display", phase, r.tool_name, r.tool_call_id, r.result, r.args)
                results.append(ToolResult(r.tool_call_id, r.tool_name,
                                          await self._args("display", r.tool_name, r.tool_call_id, r.args),
                                          None if value is SUPPRESSED else value, r.is_error))
            out.append(dataclasses.replace(step, tool_calls=[await self._call(c) for c in step.tool_calls],
                                           tool_results=results))
        return out

    async def display_messages(self, messages: list[Message]) -> list[Message]:
        """``Generate``'s response messages as the client sees them."""
        return [await self._project_message(m, "display") for m in messages] if self else messages

    # --- transcript ---------------------------------------------------------------------------

    async def annotate(self, messages: list[Message]) -> None:
        """Set the ``transcript`` projection of each tool invocation about to be stored."""
        if not self:
            return
        for message in messages:
            for part in message.content.parts:
                if isinstance(part, ToolInvocationPart):
                    part.transcript = await self._projections(part, "transcript")

    async def _projections(self, part: ToolInvocationPart, target: str) -> dict[str, Any] | None:
        if not self.has_transform(part.tool_name, target):
            return None
        name, call_id = part.tool_name, part.tool_call_id
        shown: dict[str, Any] = {"args": await self.project(target, "input", name, call_id, part.args)}
        if part.state == "output-error":
            error = part.error_text or _text(part.result)
            shown["errorText"] = await self.project(target, "error", name, call_id, error, part.args)
            if part.result is not None:
                shown["result"] = shown["errorText"]
        elif part.state == "result":
            shown["result"] = await self.project(target, "output", name, call_id, part.result)
        suppressed = sorted(k for k, v in shown.items() if v is SUPPRESSED)
        out = {k: v for k, v in shown.items() if v is not SUPPRESSED}
        if suppressed:
            out["suppressed"] = suppressed
        return out

    async def _project_message(self, message: Message, target: str) -> Message:
        if not any(isinstance(p, ToolInvocationPart) for p in message.content.parts):
            return message
        parts = []
        for part in message.content.parts:
            if isinstance(part, ToolInvocationPart):
                part = apply_projection(part, await self._projections(part, target))
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


def _tool_output_inner(chunk: Chunk) -> Chunk:
    return chunk.payload.output  # type: ignore[no-any-return]


def _tool_output_wrap(chunk: Chunk, inner: Chunk) -> Chunk:
    return _with(chunk, output=inner)


NESTED["tool-output"] = (_tool_output_inner, _tool_output_wrap)


def carry_nested(chunk: Chunk) -> None:
    """A sub-agent's ``tool-output`` chunk shows its inner chunk as the sub-agent's own tool
    payload rules projected it (the parent's rules, when it has any, then apply on top)."""
    inner = chunk.payload.output
    if inner is None:
        return
    shown = display_of(inner)
    if shown is not inner:
        set_display(chunk, None if shown is None else _tool_output_wrap(chunk, shown))
