"""Running a step's tool calls: hooks, execution, ``process_tool_result``, result chunks.

Tools execute concurrently; their results are processed and streamed in call order.

The tool hooks are the agent's (or the call's) first, then those of the agent's input and output
processors that serve ``before_tool_call`` / ``after_tool_call`` for the tool, in array order
(each processor once). The first hook that skips the tool decides its output.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from ..core.chunks import Chunk, ToolCallPayload, ToolErrorPayload, ToolResult, ToolResultPayload
from ..core.args import (
    AfterToolCallArgs,
    BeforeToolCallArgs,
    ProcessToolResultArgs,
    ToolStreamWriter,
    StepResult,
)
from ..core.args import OnDelegationCompleteArgs, OnDelegationStartArgs
from ..core.errors import ProcessorError, ProcessorUnavailableError, TripwireError
from ..core.messages import Message
from ..core.processor import wants_tool
from ..tools import ToolAfterHookContext, ToolContext, ToolHookContext
from ..tools.hooks import as_before_result, call_hook
from ..tracing.spans import ATTR, tool_span
from .output import Output
from .state import RunPlan, RunState
from .subagents import (
    Delegation,
    DelegationCompleteResult,
    DelegationOutcome,
    DelegationStartResult,
)

log = logging.getLogger(__name__)

_SAME = object()


@dataclass
class _Outcome:
    ok: bool
    value: Any = None
    error: str = ""
    for_model: Any = _SAME
    """What the model gets of ``value`` (a tool's ``to_model_output``); ``_SAME``: all of it."""


async def run_tool_calls(
    plan: RunPlan, state: RunState, output: Output, calls: list[ToolCallPayload], result: StepResult
) -> None:
    feedback: list[str] = []
    tasks = [asyncio.ensure_future(_execute(plan, state, output, c, feedback)) for c in calls]
    try:
        outcomes = await asyncio.gather(*tasks)
    except BaseException:  # a sub-agent that fails the run: its siblings (and their children) end too
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    for call, outcome in zip(calls, outcomes, strict=True):
        await _deliver(plan, state, output, call, outcome, result)
    for text in feedback:  # a delegation's feedback: an assistant message after the results
        state.message_list.add(Message.assistant(text), "response")
        state.response_id = ""  # the answer after it starts a new message


async def _execute(
    plan: RunPlan, state: RunState, output: Output, call: ToolCallPayload, feedback: list[str]
) -> _Outcome:
    hook_ctx = {
        "tool_call_id": call.tool_call_id,
        "run_id": plan.run_id,
        "request_context": state.scope.request_context,
    }
    meta = {"agent_id": plan.agent.id, "agent_name": plan.agent.name or plan.agent.id}
    hooks = plan.tool_hooks
    with tool_span(plan.tracer, tool_name=call.tool_name, tool_call_id=call.tool_call_id) as span:
        before = as_before_result(
            await call_hook(hooks.before_tool_call, ToolHookContext(call.tool_name, call.args, hook_ctx, meta))
        )
        if before is None or before.proceed:
            before = as_before_result(await state.chain.run_tool_hook(
                _tool_processors(plan), "before_tool_call", call.tool_name,
                lambda p, c: BeforeToolCallArgs(tool_name=call.tool_name, tool_call_id=call.tool_call_id,
                                                args=call.args, **c),
                stop=_skips,
            ))
        if before is not None and not before.proceed:
            span.set_attribute("treadle.tool.skipped", True)
            return _Outcome(True, before.output)  # afterToolCall is skipped too
        tool = state.step_tools.get(call.tool_name) or plan.tools.get(call.tool_name)
        error: BaseException | None = None
        value: Any = None
        if tool is None:
            error = LookupError(f"tool {call.tool_name!r} is not available to this agent")
        else:
            ctx = ToolContext(
                call.tool_call_id, plan.run_id, plan.agent.id, state.scope.request_context,
                ToolStreamWriter(output.emit, output.send, plan.run_id, call.tool_call_id, call.tool_name),
                thread_id=state.scope.thread_id, resource_id=state.scope.resource_id,
                delegation=_Delegations(plan, state, call, feedback),
            )
            try:
                value = await tool.run(call.args, ctx)
            except Exception as e:  # a tool's failure is the model's to handle, not the run's
                # A delegation hook's abort (or its fail_closed processor that cannot answer) and a
                # sub-agent whose failure policy says so end the run.
                if isinstance(e, (TripwireError, ProcessorUnavailableError)) or getattr(e, "fails_run", False):
                    raise
                error = e
        await call_hook(
            hooks.after_tool_call,
            ToolAfterHookContext(call.tool_name, call.args, hook_ctx, meta, value, error),
        )
        await state.chain.run_tool_hook(
            _tool_processors(plan), "after_tool_call", call.tool_name,
            lambda p, c: AfterToolCallArgs(
                tool_name=call.tool_name, tool_call_id=call.tool_call_id, args=call.args, output=value,
                error=None if error is None else (str(error) or type(error).__name__), **c),
        )
        if error is not None:
            span.set_attribute(ATTR.ERROR_TYPE, type(error).__name__)
            span.set_status(_error_status(error))
            return _Outcome(False, error=str(error) or type(error).__name__)
        to_model = getattr(tool, "to_model_output", None)
        return _Outcome(True, value, for_model=to_model(value) if to_model is not None else _SAME)


async def _deliver(
    plan: RunPlan, state: RunState, output: Output, call: ToolCallPayload, outcome: _Outcome,
    result: StepResult,
) -> None:
    ml = state.message_list
    part = ml.find_tool_invocation(call.tool_call_id)
    if not outcome.ok:
        if part is not None:
            ml.update_tool_invocation(dataclasses.replace(
                part, state="output-error", is_error=True, error_text=outcome.error
            ))
        result.tool_results.append(
            ToolResult(call.tool_call_id, call.tool_name, call.args, outcome.error, True)
        )
        await output.emit(Chunk.of(
            ToolErrorPayload(call.tool_call_id, call.tool_name, outcome.error, call.args)
        ))
        return
    # process_tool_result runs before the result enters the list; a processor replaces it with
    # message_list.update_tool_invocation, and what the list then holds is what everyone sees.
    await state.chain.run_message_hook(
        [p for p in plan.output_processors if wants_tool(p, "process_tool_result", call.tool_name)],
        "process_tool_result", ml,
        lambda p, c: ProcessToolResultArgs(
            messages=ml.get_all(), message_list=ml, step_number=result.step_number,
            tool_name=call.tool_name, tool_call_id=call.tool_call_id, args=call.args,
            result=outcome.value, system_messages=list(ml.system_messages),
            steps=list(state.steps), **c,
        ),
    )
    current = ml.find_tool_invocation(call.tool_call_id)
    if current is not None and current.state == "result":
        value = current.result
    else:
        value = outcome.value
        if current is not None:
            seen = value if outcome.for_model is _SAME else outcome.for_model
            ml.update_tool_invocation(dataclasses.replace(current, state="result", result=seen))
    result.tool_results.append(ToolResult(call.tool_call_id, call.tool_name, call.args, value))
    await output.emit(Chunk.of(ToolResultPayload(call.tool_call_id, call.tool_name, value, args=call.args)))


class _Delegations:
    """The parent's processors' delegation hooks, for one sub-agent tool call (``subagents``)."""

    def __init__(self, plan: RunPlan, state: RunState, call: ToolCallPayload, feedback: list[str]) -> None:
        self._plan, self._state, self._call, self._feedback = plan, state, call, feedback

    async def start(self, d: Delegation) -> DelegationStartResult:
        decision = DelegationStartResult()

        def apply(result: Any) -> bool:
            r = _start_result(result)
            if r is None:
                return False
            if not r.proceed:
                decision.proceed, decision.rejection_reason = False, r.rejection_reason
                return True
            for name in ("prompt", "instructions", "max_steps"):
                value = getattr(r, f"modified_{name}")
                if value is not None:  # later processors see the change
                    setattr(decision, f"modified_{name}", value)
                    setattr(d, name, value)
            return False

        await self._run("on_delegation_start", lambda p, c: OnDelegationStartArgs(
            key=d.ref.key, sub_agent_id=d.sub_agent_id, tool_call_id=d.tool_call_id, prompt=d.prompt,
            instructions=d.instructions, max_steps=d.max_steps, iteration=self._state.step_number, **c,
        ), apply)
        return decision

    async def complete(self, d: Delegation, outcome: DelegationOutcome) -> None:
        def apply(result: Any) -> bool:
            r = _complete_result(result)
            if r is not None:
                if r.feedback:
                    self._feedback.append(r.feedback)
                if r.bail:
                    self._state.bailed = True
            return False

        await self._run("on_delegation_complete", lambda p, c: OnDelegationCompleteArgs(
            key=d.ref.key, sub_agent_id=d.sub_agent_id, tool_call_id=d.tool_call_id, prompt=d.prompt,
            result=outcome.result, success=outcome.success, error=outcome.error,
            duration=outcome.duration, **c,
        ), apply)

    async def _run(self, hook: str, build: Any, apply: Any) -> None:
        try:
            await self._state.chain.run_tool_hook(_tool_processors(self._plan), hook, self._call.tool_name,
                                                  build, stop=apply)
        except ProcessorUnavailableError:
            raise
        except ProcessorError:  # as in the framework: a failing delegation hook is logged, ignored
            log.warning("delegation hook %s failed; the delegation goes on", hook, exc_info=True)


def _start_result(result: Any) -> DelegationStartResult | None:
    if result is None or isinstance(result, DelegationStartResult):
        return result
    if isinstance(result, dict):
        return DelegationStartResult(
            proceed=result.get("proceed", True) is not False,
            rejection_reason=str(result.get("rejectionReason") or result.get("rejection_reason") or ""),
            modified_prompt=result.get("modifiedPrompt", result.get("modified_prompt")),
            modified_instructions=result.get("modifiedInstructions", result.get("modified_instructions")),
            modified_max_steps=result.get("modifiedMaxSteps", result.get("modified_max_steps")),
        )
    return None


def _complete_result(result: Any) -> DelegationCompleteResult | None:
    if result is None or isinstance(result, DelegationCompleteResult):
        return result
    if isinstance(result, dict):
        return DelegationCompleteResult(str(result.get("feedback") or ""), bool(result.get("bail")))
    return None


def _tool_processors(plan: RunPlan) -> list[Any]:
    """The agent's input and output processors, each once (a guard may sit in both lanes)."""
    seen: set[str] = set()
    out = []
    for p in (*plan.input_processors, *plan.output_processors):
        if p.id not in seen:
            seen.add(p.id)
            out.append(p)
    return out


def _skips(result: Any) -> bool:
    before = as_before_result(result)
    return before is not None and not before.proceed


def _error_status(error: BaseException) -> Any:
    from opentelemetry.trace import Status, StatusCode

    return Status(StatusCode.ERROR, str(error))
