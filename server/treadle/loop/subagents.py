"""Sub-agents (the Mastra framework's ``agents``): each ``SubAgentRef`` of an agent is the tool
``agent-<key>``, with the framework's input and output schemas, so prompts written for it port.

The tool runs the sub-agent through a ``ChildRunner`` (an agent of this server, or one of another
Treadle server: ``api.remote_agent``), forwards every chunk of the child to the parent's stream
as it happens (``ToolStreamWriter``: ``tool-output`` chunks, ``data-*`` unwrapped), and returns
``{text, subAgentThreadId?, subAgentResourceId?, subAgentToolResults?}``; by default only
``text`` goes back to the parent's model. Cancelling the tool call (the parent run ended) closes
the child's stream, which ends the child's run, in process or on the other server.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..agents import DEFAULT_MAX_STEPS, Agent, CallOptions, MemoryOptions, ParentRun, RunRequest, SubAgentRef
from ..core.chunks import Chunk
from ..core.errors import InvalidArgumentError, NotFoundError, TreadleError
from ..core.messages import Message, SystemMessage, new_id
from ..core.tool import Tool, ToolContext

INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "prompt": {"type": "string", "description": "The task for the agent."},
        "threadId": {"type": ["string", "null"],
                     "description": "The agent's thread to continue (a subAgentThreadId it returned)."},
        "resourceId": {"type": ["string", "null"], "description": "The resource that owns the thread."},
        "instructions": {"type": ["string", "null"],
                         "description": "Instructions added to the agent's own for this task."},
        "maxSteps": {"type": ["integer", "null"], "minimum": 3,
                     "description": "The most steps the agent may take for this task."},
    },
    "required": ["prompt"],
}
"""The framework's ``createSubAgentInputSchema()``: ``null`` is accepted for the optional fields
(OpenAI sends it for a field the model leaves out)."""

OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string"},
        "subAgentThreadId": {"type": "string"},
        "subAgentResourceId": {"type": "string"},
        "subAgentToolResults": {"type": "array", "items": {
            "type": "object",
            "properties": {"toolName": {"type": "string"}, "toolCallId": {"type": "string"},
                           "result": {}, "args": {}, "isError": {"type": "boolean"}},
            "required": ["toolName", "toolCallId", "result"],
        }},
    },
    "required": ["text"],
}

REJECTED = "[Delegation Rejected]"


class ChildRunner(Protocol):
    """Runs sub-agents of one kind (local or remote)."""

    def describe(self, ref: SubAgentRef) -> tuple[str, int]:
        """``(description, default max steps)`` of the sub-agent; 0 steps: not known here (the
        sub-agent's own default applies, and a ``maxSteps`` of the model is ignored)."""
        ...

    def stream(self, ref: SubAgentRef, request: RunRequest) -> AsyncIterator[Chunk]:
        """The child's chunks; closing the iterator ends the child's run."""
        ...


class LocalRunner:
    """Sub-agents that are agents of this server, run by ``start`` (the thread runtime for a run
    with memory, so the child's run is recorded and its thread's subscribers see it)."""

    def __init__(self, get_agent: Callable[[str], Agent],
                 start: Callable[[Agent, RunRequest], AsyncIterator[Chunk]]) -> None:
        self._get = get_agent
        self.start = start

    def describe(self, ref: SubAgentRef) -> tuple[str, int]:
        try:
            agent = self._get(ref.agent_id)
        except NotFoundError:
            return "", DEFAULT_MAX_STEPS
        return agent.description, _default_steps(agent)

    def stream(self, ref: SubAgentRef, request: RunRequest) -> AsyncIterator[Chunk]:
        return self.start(self._get(ref.agent_id), request)


def _default_steps(agent: Agent) -> int:
    opts = agent.default_options
    return opts.max_steps if opts is not None and opts.max_steps is not None else DEFAULT_MAX_STEPS


class SubAgentFailedError(TreadleError):
    """A delegation failed; with ``fails_run`` (the ref's ``failure: fail_run``) the parent's run
    ends with it, else the model gets it as the tool's error."""

    def __init__(self, message: str, *, fails_run: bool = False) -> None:
        super().__init__(message)
        self.fails_run = fails_run


@dataclass
class Delegation:
    """One call of a sub-agent tool, as the delegation hooks see and change it."""

    ref: SubAgentRef
    sub_agent_id: str
    tool_call_id: str
    prompt: str
    instructions: str
    max_steps: int
    """0: the sub-agent's own default (a remote one without a cap)."""


@dataclass
class DelegationStartResult:
    """``on_delegation_start``'s answer (the framework's ``{proceed, rejectionReason,
    modifiedPrompt, modifiedInstructions, modifiedMaxSteps}``)."""

    proceed: bool = True
    rejection_reason: str = ""
    modified_prompt: str | None = None
    modified_instructions: str | None = None
    modified_max_steps: int | None = None


@dataclass
class DelegationCompleteResult:
    """``on_delegation_complete``'s answer: ``feedback`` for the parent's memory, or ``bail``."""

    feedback: str = ""
    bail: bool = False


@dataclass
class DelegationOutcome:
    """What a finished delegation hands the delegation-complete hooks."""

    result: Any = None
    success: bool = True
    error: str = ""
    duration: float = 0.0


class DelegationHooks(Protocol):
    """Runs the parent's processors' delegation hooks (the loop provides it per tool call)."""

    async def start(self, delegation: Delegation) -> DelegationStartResult: ...

    async def complete(self, delegation: Delegation, outcome: DelegationOutcome) -> None: ...


@dataclass
class _Child:
    """What the parent keeps of the child's stream."""

    text: list[str] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    failure: str = ""

    def see(self, chunk: Chunk) -> None:
        t, p = chunk.type, chunk.payload
        if t == "text-delta":
            self.text.append(p.text)
        elif t == "tool-result":
            self.tool_results.append({"toolName": p.tool_name, "toolCallId": p.tool_call_id,
                                      "result": p.result, "args": p.args, "isError": p.is_error})
        elif t == "tool-error":
            self.tool_results.append({"toolName": p.tool_name, "toolCallId": p.tool_call_id,
                                      "result": p.error, "args": p.args, "isError": True})
        elif t == "tripwire":
            self.failure = f"tripped: {p.reason}" + (f" (processor {p.processor_id!r})" if p.processor_id else "")
        elif t == "error":
            self.failure = f"failed: {p.message}"
        elif t == "abort":
            self.failure = f"was aborted: {p.reason}" if p.reason else "was aborted"


def sub_agent_tool(ref: SubAgentRef, runner: ChildRunner) -> Tool:
    """The tool ``agent-<key>`` for ``ref``."""
    description, default_steps = runner.describe(ref)
    cap = ref.max_steps if ref.max_steps is not None else default_steps

    async def execute(args: Any, ctx: ToolContext) -> Any:
        prompt, instructions, asked_steps, thread_arg = _parse(args)
        delegation = Delegation(
            ref, ref.agent_id or (ref.remote.agent_id if ref.remote else ""), ctx.tool_call_id, prompt,
            instructions, min(asked_steps, cap) if asked_steps is not None and cap else cap,
        )
        hooks: DelegationHooks | None = getattr(ctx, "delegation", None)
        if hooks is not None:
            decision = await hooks.start(delegation)
            if not decision.proceed:
                return {"text": f"{REJECTED} {decision.rejection_reason}".rstrip()}
            if decision.modified_prompt is not None:
                delegation.prompt = decision.modified_prompt
            if decision.modified_instructions is not None:
                delegation.instructions = decision.modified_instructions
            if decision.modified_max_steps is not None:  # hooks may go past the cap
                delegation.max_steps = decision.modified_max_steps
        started = time.monotonic()
        run_id = new_id("run")
        memory = _memory(ref, ctx, run_id, thread_arg)
        request = RunRequest(
            [Message.user(delegation.prompt)],
            CallOptions(max_steps=delegation.max_steps or None, memory=memory,
                        request_context=dict(ctx.request_context),
                        parent=ParentRun(ctx.run_id, ctx.tool_call_id, ctx.agent_id)),
            run_id=run_id,
            # appended to the sub-agent's own, as the framework does
            instructions=[SystemMessage(delegation.instructions)] if delegation.instructions else [],
        )
        child = _Child()
        try:
            stream = runner.stream(ref, request)
            async with contextlib.aclosing(stream):  # type: ignore[type-var]
                async for chunk in stream:
                    child.see(chunk)
                    await ctx.writer.write(chunk)
        except (TreadleError, OSError) as e:
            child.failure = f"failed: {e}"
        output: dict[str, Any] = {"text": "".join(child.text)}
        if memory is not None:
            output["subAgentThreadId"], output["subAgentResourceId"] = memory.thread, memory.resource
        if child.tool_results:
            output["subAgentToolResults"] = child.tool_results
        if hooks is not None:
            await hooks.complete(delegation, DelegationOutcome(
                None if child.failure else output, not child.failure, child.failure,
                time.monotonic() - started))
        if child.failure:
            raise SubAgentFailedError(f"sub-agent {ref.key!r} {child.failure}", fails_run=ref.failure == "fail_run")
        return output

    return Tool(
        name=ref.tool_name,
        execute=execute,
        description=ref.description or description or f"Agent: {ref.key}",
        input_schema=INPUT_SCHEMA,
        output_schema=OUTPUT_SCHEMA,
        to_model_output=None if ref.include_tool_results else _text_only,
    )


def _text_only(output: Any) -> Any:
    return output.get("text", "") if isinstance(output, dict) else output


def _parse(args: Any) -> tuple[str, str, int | None, str]:
    """``(prompt, instructions, maxSteps, threadId)`` from the model's arguments."""
    if not isinstance(args, dict):
        raise InvalidArgumentError("the arguments must be an object with a 'prompt'")
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt:
        raise InvalidArgumentError("'prompt' must be a non-empty string")
    instructions = args.get("instructions") or ""
    if not isinstance(instructions, str):
        raise InvalidArgumentError("'instructions' must be a string or null")
    steps = args.get("maxSteps")
    if steps is not None:
        try:
            steps = int(steps)  # strings are coerced, as the framework does
        except (TypeError, ValueError):
            raise InvalidArgumentError("'maxSteps' must be an integer or null") from None
        steps = max(steps, 3)
    thread = args.get("threadId") or ""
    return prompt, instructions, steps, thread if isinstance(thread, str) else ""


def _memory(ref: SubAgentRef, ctx: ToolContext, run_id: str, thread_arg: str) -> MemoryOptions | None:
    """The child's thread. The resource is always derived from the parent's: a model can name a
    thread of this sub-agent to continue (``threadId``), never reach another owner's memory."""
    if ref.memory == "none" or not ctx.thread_id:
        return None
    resource = f"{ctx.resource_id}-{ref.key}"
    if thread_arg:
        return MemoryOptions(resource, thread_arg)
    thread = f"{ctx.thread_id}-{ref.key}" if ref.memory == "stable_thread" else f"{ctx.thread_id}-{run_id}"
    return MemoryOptions(resource, thread)


StartChild = Callable[[Agent, RunRequest], AsyncIterator[Chunk]]
Awaiting = Callable[..., Awaitable[Any]]
