"""One step of the loop: input-step hooks, the provider call, output hooks, tools.

``run_step`` returns a tagged ``StepOutcome`` that the orchestrator matches on.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeAlias

from opentelemetry import trace

from ..core.chunks import Chunk, ErrorPayload, Finish, StepFinish, StepStart, Tripwire
from ..core.errors import APICallError, ProcessorError, TripwireError
from ..core.message_list import Checkpoint
from ..core.messages import ErrorPart, Message, MessageContent, StepStartPart, SystemMessage, new_id
from ..core.args import (
    ProcessAPIErrorArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    ProcessOutputStepArgs,
    StepResult,
)
from ..providers.base import LanguageModel, ModelConfig, ModelFinish, ModelRequest
from ..tools import Tool
from ..tracing.spans import ATTR, chat_span, use_span
from .collect import StepCollector
from .output import Output
from .prompt import build_prompt
from .state import RunPlan, RunState
from .tool_calls import run_tool_calls

current_lease_check: ContextVar[Callable[[], Awaitable[None]] | None] = ContextVar("treadle_lease_check", default=None)
"""Awaited before each model call of the current run (None: not a thread's run). A model call is
the one thing a run does that no fence can take back, so a run on a thread makes one only while
its lease has time left: the check (set by the thread runtime) renews a lease close to its end
(this process stalled), and raises when another replica has taken the thread."""

FEEDBACK_TAG = "processor-retry-feedback"


def feedback_message(reason: str) -> str:
    return (
        f"[Processor Feedback] Your previous response was not accepted: {reason}. "
        "Please try again with the feedback in mind."
    )


@dataclass
class Continue:
    """Tools ran: the loop goes on if the step limit allows."""


@dataclass
class Done:
    """The model answered without calling tools."""


@dataclass
class RetryStep:
    """A processor rejected the step with ``retry=True`` and the budget allowed it."""

    reason: str


@dataclass
class RetryCall:
    """An error processor asked to retry the failed provider call."""


@dataclass
class Tripped:
    tripwire: Tripwire


@dataclass
class Failed:
    error: ErrorPayload
    sent: bool = False
    """The ``error`` chunk was already streamed (inside the failed step)."""


StepOutcome: TypeAlias = Continue | Done | RetryStep | RetryCall | Tripped | Failed

ResolveModel = Callable[[ModelConfig], LanguageModel]


@dataclass
class _Step:
    number: int
    checkpoint: Checkpoint
    result: StepResult
    message: Message | None = None
    collector: StepCollector | None = None
    first_part: int = 0
    """Where this step's parts (its step-start first, after an earlier step) begin in ``message``."""


async def run_step(
    plan: RunPlan, state: RunState, output: Output, resolve_model: ResolveModel,
    base_system: list[SystemMessage],
) -> StepOutcome:
    ml = state.message_list
    step = _Step(state.step_number, ml.checkpoint(), StepResult(step_number=state.step_number))
    try:
        return await _run(plan, state, output, resolve_model, base_system, step)
    except TripwireError as e:
        return await _reject(plan, state, output, step, e)
    except ProcessorError as e:
        await output.reset()
        ml.restore(step.checkpoint)
        return Failed(ErrorPayload(str(e), "ProcessorError", {"processorId": e.processor_id, "hook": e.hook}))


async def _run(
    plan: RunPlan, state: RunState, output: Output, resolve_model: ResolveModel,
    base_system: list[SystemMessage], step: _Step,
) -> StepOutcome:
    ml, chain, n = state.message_list, state.chain, step.number
    state.finish_streamed = False

    # 1. System messages reset to the originals; a rejected step's feedback is added.
    ml.replace_all_system_messages(list(base_system))
    ml.clear_system_tag(FEEDBACK_TAG)
    if state.feedback is not None:
        ml.add_system(SystemMessage(feedback_message(state.feedback)), tag=FEEDBACK_TAG)
        state.feedback = None

    # 2. process_input_step over input processors, then prepare_step; overrides chain.
    config = await chain.process_input_step(
        _with_prepare_step(plan), ml, _initial_config(plan),
        lambda p, c, cfg: ProcessInputStepArgs(
            messages=ml.get_all(), message_list=ml, step_number=n, steps=list(state.steps),
            system_messages=list(ml.system_messages), model=_model_name(cfg["model"]),
            tool_choice=cfg["tool_choice"], active_tools=_active_tools(cfg),
            tools=dict(cfg["tools"]), provider_options=cfg["provider_options"],
            model_settings=cfg["model_settings"], structured_output=cfg["structured_output"], **c,
        ),
        resolve_tools=partial(_step_tools, plan),
    )
    state.step_tools = {name: t for name, t in config["tools"].items() if isinstance(t, Tool)}
    model = _resolve(config["model"], plan, resolve_model)
    step.result.model_id = model.model_id

    # 3. The prompt, which process_llm_request may replace for this call only.
    prompt, cached = await chain.process_llm_request(
        plan.input_processors, build_prompt(ml),
        lambda p, c, pr: ProcessLLMRequestArgs(
            prompt=pr, model=model.model_id, step_number=n, steps=list(state.steps), **c
        ),
    )
    request = ModelRequest(
        prompt=prompt,
        tools=_visible_tools(config),
        tool_choice=config["tool_choice"] or "auto",
        settings=config["model_settings"],
        provider_options=config["provider_options"] or {},
        structured_output=config["structured_output"],
    )

    message = _response_message(state, step, model.model_id)
    step.message, step.collector = message, StepCollector(message)
    output.start_message(message)
    output.on_sent = step.collector.add
    await output.emit(Chunk.of(StepStart(message.id, n, model.model_id)))

    # 4-5. The provider call; every chunk through process_output_stream.
    try:
        finish, raw_chunks = await _call_model(plan, model, request, cached, output, step.collector)
    except APICallError as err:
        await output.settle()  # guardrails beside the call decide first
        return await _api_error(plan, state, output, step, err)
    await output.settle()  # nothing of the step goes on before guardrails beside the call passed

    ml.add(message, "response")
    collector = step.collector
    collector.seal()
    result = step.result
    result.text, result.reasoning_text = collector.step_text, collector.step_reasoning
    result.tool_calls, result.finish_reason, result.usage = collector.calls(), finish.reason, finish.usage
    state.usage = state.usage + finish.usage
    state.steps.append(result)

    # 5b. The model's ``finish`` through the output processors, as the framework does unless the
    # model called tools; the client gets the run's own ``finish`` last, at the very end.
    if finish.reason != "tool-calls":
        await output.emit(Chunk.of(Finish(finish.reason, state.usage)))
        state.finish_streamed = True

    # 6. process_llm_response (input processors), with this step included in ``steps``.
    await chain.process_llm_response(
        plan.input_processors,
        lambda p, c: ProcessLLMResponseArgs(
            chunks=[*raw_chunks, Chunk.of(Finish(finish.reason, finish.usage))], model=model.model_id, step_number=n, steps=list(state.steps),
            from_cache=cached is not None, **c,
        ),
    )

    # 7. process_output_step, before any tool runs.
    await chain.run_message_hook(
        plan.output_processors, "process_output_step", ml,
        lambda p, c: ProcessOutputStepArgs(
            messages=ml.get_all(), message_list=ml, step_number=n,
            finish_reason=finish.reason, tool_calls=list(result.tool_calls), text=result.text,
            usage=finish.usage, system_messages=list(ml.system_messages), steps=list(state.steps),
            provider_metadata=finish.provider_metadata, **c,
        ),
    )

    # 8. Tools.
    if collector.tool_calls:
        await run_tool_calls(plan, state, output, collector.tool_calls, result)

    more = bool(collector.tool_calls) and not state.bailed
    await output.emit(Chunk.of(StepFinish(
        reason=finish.reason, usage=finish.usage, text=result.text,
        tool_calls=list(result.tool_calls), raw_reason=finish.raw_reason, message_id=message.id,
        step_number=n, is_continued=more,
    )))
    return Continue() if more else Done()


def _response_message(state: RunState, step: _Step, model_id: str) -> Message:
    """The response's assistant message: the message of the earlier steps as the message list
    holds it now (after a rollback, its restored copy), or a new one. A step after another in the
    same message begins with a step-start part; the first step has none (as the framework
    stores it). A signal taken in at a step boundary closes the message (``state.response_id``
    is cleared): the answer after it starts a new one."""
    message = next((m for m in state.message_list.get_all() if m.id == state.response_id), None)
    if message is None:
        state.response_id = state.response_id or new_id()
        message = Message(id=state.response_id, role="assistant", content=MessageContent(parts=[]))
    step.first_part = len(message.content.parts)
    if message.content.parts:
        message.content.parts.append(StepStartPart(model_id))
    return message


async def _call_model(
    plan: RunPlan, model: LanguageModel, request: ModelRequest, cached: list[Chunk] | None,
    output: Output, collector: StepCollector,
) -> tuple[ModelFinish, list[Chunk]]:
    span = chat_span(
        plan.tracer, provider=model.provider if cached is None else "cache", model=model.model_id,
        temperature=request.settings.temperature, max_tokens=request.settings.max_output_tokens,
    )
    started = time.monotonic()
    first = True
    raw: list[Chunk] = []
    finish = ModelFinish(reason="unknown")
    if cached is None and (check := current_lease_check.get()) is not None:
        await check()  # a run on a thread calls the model only while it holds the thread
    source: AsyncIterator[Chunk] = _replay(cached) if cached is not None else model.stream(request)
    now = output.direct()
    try:
        with use_span(span):
            async for chunk in source:
                if first:
                    span.set_attribute(ATTR.TIME_TO_FIRST_CHUNK, time.monotonic() - started)
                    first = False
                if chunk.type == "finish":
                    finish = _as_model_finish(chunk.payload)
                    continue
                raw.append(chunk)
                if now is None or not now(chunk):
                    await output.stream(chunk)
            await output.flush()
    except APICallError as err:
        span.set_attribute(ATTR.ERROR_TYPE, str(err.status_code or "connection"))
        span.set_status(trace.Status(trace.StatusCode.ERROR, err.message))
        raise
    finally:
        aclose = getattr(source, "aclose", None)
        if aclose is not None:
            await aclose()
        _finish_chat_span(span, finish)
    return finish, raw


def _finish_chat_span(span: trace.Span, finish: ModelFinish) -> None:
    span.set_attribute(ATTR.FINISH_REASONS, [finish.reason])
    span.set_attribute(ATTR.INPUT_TOKENS, finish.usage.input_tokens)
    span.set_attribute(ATTR.OUTPUT_TOKENS, finish.usage.output_tokens)
    if finish.usage.cached_input_tokens:
        span.set_attribute(ATTR.CACHE_READ_TOKENS, finish.usage.cached_input_tokens)
    if finish.response_model:
        span.set_attribute(ATTR.RESPONSE_MODEL, finish.response_model)
    if finish.response_id:
        span.set_attribute(ATTR.RESPONSE_ID, finish.response_id)
    span.end()


def _as_model_finish(payload: Any) -> ModelFinish:
    if isinstance(payload, ModelFinish):
        return payload
    # A cached response may end with a run-level ``finish`` chunk (payload ``Finish``).
    return ModelFinish(reason=payload.reason, usage=payload.total_usage)


async def _replay(chunks: list[Chunk]) -> AsyncIterator[Chunk]:
    saw_finish = False
    for chunk in chunks:
        saw_finish = saw_finish or chunk.type == "finish"
        yield Chunk(chunk.type, chunk.payload, data=chunk.data, transient=chunk.transient, id=chunk.id)
    if not saw_finish:
        yield Chunk("finish", ModelFinish(reason="stop"))


async def _api_error(
    plan: RunPlan, state: RunState, output: Output, step: _Step, err: APICallError
) -> StepOutcome:
    ml, n = state.message_list, step.number
    retry = await state.chain.process_api_error(
        plan.error_processors,
        lambda p, c: ProcessAPIErrorArgs(
            error=err, messages=ml.get_all(), message_list=ml, step_number=n,
            steps=list(state.steps), **c,
        ),
    )
    step.result.finish_reason = "error"
    state.steps.append(step.result)  # the failed call counts as a step
    retrying = retry and state.retry_count < plan.retry_budget_for_api_errors()
    details = {"statusCode": err.status_code, "provider": err.provider, "body": err.body}
    error = ErrorPayload(str(err), "APICallError", details)
    if not retrying:  # the error belongs to the failed step: it comes before its step-finish
        await output.emit(Chunk.of(error))
    await output.emit(Chunk.of(StepFinish(reason="error", message_id=step.message.id if step.message else "",
                                          step_number=n)))
    if retrying:
        if step.message is not None:  # the failed call leaves nothing in the call's message
            del step.message.content.parts[step.first_part:]
        state.count_retry()
        return RetryCall()
    if step.message is not None:
        if step.collector is not None:
            step.collector.seal()  # what streamed before the error is kept with it
        step.message.content.parts.append(ErrorPart("APICallError", str(err)))
        ml.add(step.message, "response")
    return Failed(error, sent=True)


async def _reject(
    plan: RunPlan, state: RunState, output: Output, step: _Step, e: TripwireError
) -> StepOutcome:
    """A processor aborted inside the step: roll the step back, then retry or trip."""
    await output.reset()  # chunks behind the aborted one are never sent
    state.message_list.restore(step.checkpoint)
    tripwire = Tripwire(e.reason, e.retry, e.metadata, e.processor_id)
    result = step.result
    result.text, result.reasoning_text, result.tool_calls, result.tool_results = "", "", [], []
    result.tripwire = tripwire
    if result not in state.steps:
        state.steps.append(result)
    if e.retry and state.retry_count < plan.retry_budget_for_tripwire():
        await output.send(Chunk.of(StepFinish(
            reason="retry", usage=result.usage, step_number=step.number, is_continued=True,
            message_id=step.message.id if step.message else "",
        )))
        return RetryStep(e.reason)
    result.finish_reason = "tripwire"
    return Tripped(tripwire)


def _initial_config(plan: RunPlan) -> dict[str, Any]:
    opts = plan.options
    return {
        "model": plan.model.id,
        "tools": dict(plan.tools),
        # None: every tool of the step is active, those a processor adds included
        "active_tools": list(opts.active_tools) if opts.active_tools is not None else None,
        "tool_choice": opts.tool_choice or "auto",
        "provider_options": dict(opts.provider_options or {}),
        "model_settings": plan.model_settings,
        "structured_output": opts.structured_output,
    }


class _PrepareStep:
    """Wraps the call's ``prepare_step`` callback as the last ``process_input_step``."""

    id = "prepare-step"

    def __init__(self, fn: Callable[[ProcessInputStepArgs], Any]) -> None:
        self.process_input_step = fn


def _with_prepare_step(plan: RunPlan) -> list[Any]:
    if plan.options.prepare_step is None:
        return plan.input_processors
    return [*plan.input_processors, _PrepareStep(plan.options.prepare_step)]


def _model_name(model: Any) -> str:
    if isinstance(model, str):
        return model
    return f"{model.provider}/{model.model_id}"


def _resolve(model: Any, plan: RunPlan, resolve_model: ResolveModel) -> LanguageModel:
    """A processor-set model lasts only its own step; strings go through the router."""
    if not isinstance(model, str):
        return model
    if model == plan.model.id:
        return resolve_model(plan.model)
    same_provider = model.split("/", 1)[0] == plan.model.id.split("/", 1)[0]
    return resolve_model(ModelConfig(
        id=model, base_url=plan.model.base_url if same_provider else "",
        max_retries=plan.model.max_retries, credential=plan.model.credential if same_provider else "",
    ))


def _step_tools(plan: RunPlan, returned: Any, current: dict[str, Any]) -> dict[str, Any]:
    """A ``processInputStep`` ``tools`` result as the step's tool set. Tools pass as they are;
    a name (a list entry, or a mapping key whose value is not a tool, e.g. a remote processor's
    definition) is the step's tool of that name or a tool the server can attach to an agent."""
    if returned is None:
        return {}
    items = returned.items() if isinstance(returned, Mapping) else [
        (x if isinstance(x, str) else getattr(x, "name", None), x) for x in returned
    ]
    out: dict[str, Any] = {}
    for name, value in items:
        if not isinstance(name, str) or not name:
            raise LookupError(f"processInputStep returned a tool without a name: {value!r}")
        if isinstance(value, Tool) or (not isinstance(value, str) and hasattr(value, "run")):
            out[name] = value
        elif name in current:
            out[name] = current[name]
        else:
            out[name] = _registry_tool(plan, name)
    return out


def _registry_tool(plan: RunPlan, name: str) -> Any:
    tool = plan.find_tool(name) if plan.find_tool is not None else None
    if tool is None:
        raise LookupError(
            f"processInputStep returned tool {name!r}, which is not one of the step's tools, "
            "a tool registered on this server, or a tool an attached tool service serves"
        )
    return tool


def _active_tools(config: dict[str, Any]) -> list[str]:
    active = config["active_tools"]
    return list(config["tools"]) if active is None else list(active)


def _visible_tools(config: dict[str, Any]) -> list[Any]:
    if config["tool_choice"] == "none":  # toolChoice none also hides the tools
        return []
    active = set(_active_tools(config))
    specs = []
    for name, t in config["tools"].items():
        if name in active:
            specs.append(t.spec() if hasattr(t, "spec") else t)
    return specs


__all__ = [
    "Continue", "Done", "Failed", "RetryCall", "RetryStep", "StepOutcome", "Tripped",
    "feedback_message", "run_step",
]
