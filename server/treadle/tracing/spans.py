"""Span factories with GenAI semantic-convention names and attributes.

Span tree of one call::

    invoke_agent {agent}
      step {n}
        {hook} {processor}          one per hook invocation (process_output_stream: one per step)
        chat {model}                the provider call
        execute_tool {tool}
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from types import TracebackType

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer


class ATTR:
    OPERATION = "gen_ai.operation.name"
    PROVIDER = "gen_ai.provider.name"
    AGENT_ID = "gen_ai.agent.id"
    AGENT_NAME = "gen_ai.agent.name"
    CONVERSATION_ID = "gen_ai.conversation.id"
    REQUEST_MODEL = "gen_ai.request.model"
    REQUEST_TEMPERATURE = "gen_ai.request.temperature"
    REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens"
    REQUEST_STREAM = "gen_ai.request.stream"
    RESPONSE_MODEL = "gen_ai.response.model"
    RESPONSE_ID = "gen_ai.response.id"
    FINISH_REASONS = "gen_ai.response.finish_reasons"
    TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk"
    INPUT_TOKENS = "gen_ai.usage.input_tokens"
    OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
    CACHE_READ_TOKENS = "gen_ai.usage.cache_read.input_tokens"
    TOOL_NAME = "gen_ai.tool.name"
    TOOL_CALL_ID = "gen_ai.tool.call.id"
    TOOL_TYPE = "gen_ai.tool.type"
    ERROR_TYPE = "error.type"
    RUN_ID = "treadle.run.id"
    STEP_NUMBER = "treadle.step.number"
    PROCESSOR_ID = "treadle.processor.id"
    PROCESSOR_HOOK = "treadle.processor.hook"
    PROCESSOR_INDEX = "treadle.processor.index"
    PROCESSOR_MODE = "treadle.processor.mode"
    PROCESSOR_OUTCOME = "treadle.processor.outcome"
    RETRY_COUNT = "treadle.processor.retry_count"
    CHUNK_COUNT = "treadle.processor.chunk_count"
    AGENT_VERSION_ID = "treadle.agent.version.id"
    AGENT_VERSION_NUMBER = "treadle.agent.version.number"
    AGENT_VERSION_SELECTION = "treadle.agent.version.selection"


def agent_span(
    tracer: Tracer, *, agent_id: str, agent_name: str, run_id: str, thread_id: str = "",
    version: dict[str, Any] | None = None,
) -> AbstractContextManager[Span]:
    """The run's span, current inside the ``with``."""
    attrs: dict[str, Any] = {
        ATTR.OPERATION: "invoke_agent",
        ATTR.AGENT_ID: agent_id,
        ATTR.AGENT_NAME: agent_name or agent_id,
        ATTR.RUN_ID: run_id,
    }
    if thread_id:
        attrs[ATTR.CONVERSATION_ID] = thread_id
    if version is not None:  # the stored agent version the run resolved (treadle.versions)
        attrs[ATTR.AGENT_VERSION_SELECTION] = version["selection"]
        if version["id"]:
            attrs[ATTR.AGENT_VERSION_ID] = version["id"]
            attrs[ATTR.AGENT_VERSION_NUMBER] = version["number"]
    return tracer.start_as_current_span(
        f"invoke_agent {agent_name or agent_id}", kind=SpanKind.INTERNAL, attributes=attrs
    )


def step_span(tracer: Tracer, step_number: int) -> AbstractContextManager[Span]:
    """A step's span, current inside the ``with``."""
    return tracer.start_as_current_span(f"step {step_number}", attributes={ATTR.STEP_NUMBER: step_number})


def chat_span(tracer: Tracer, *, provider: str, model: str, temperature: float | None,
              max_tokens: int | None) -> Span:
    """Started, not entered: the caller ends it when the provider stream ends."""
    attrs: dict[str, Any] = {
        ATTR.OPERATION: "chat",
        ATTR.PROVIDER: provider,
        ATTR.REQUEST_MODEL: model,
        ATTR.REQUEST_STREAM: True,
    }
    if temperature is not None:
        attrs[ATTR.REQUEST_TEMPERATURE] = temperature
    if max_tokens is not None:
        attrs[ATTR.REQUEST_MAX_TOKENS] = max_tokens
    return tracer.start_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attrs)


def tool_span(tracer: Tracer, *, tool_name: str, tool_call_id: str) -> AbstractContextManager[Span]:
    """A tool call's span, current inside the ``with``."""
    return tracer.start_as_current_span(
        f"execute_tool {tool_name}",
        attributes={
            ATTR.OPERATION: "execute_tool",
            ATTR.TOOL_NAME: tool_name,
            ATTR.TOOL_CALL_ID: tool_call_id,
            ATTR.TOOL_TYPE: "function",
        },
    )


def processor_span(
    tracer: Tracer, *, processor_id: str, hook: str, index: int, retry_count: int,
    mode: str = "MUTATE", context: Context | None = None,
) -> Span:
    """Started, not entered: one span per hook invocation (or per step for the stream hook)."""
    return tracer.start_span(
        f"{hook} {processor_id}",
        context=context,
        attributes={
            ATTR.PROCESSOR_ID: processor_id,
            ATTR.PROCESSOR_HOOK: hook,
            ATTR.PROCESSOR_INDEX: index,
            ATTR.PROCESSOR_MODE: mode,
            ATTR.RETRY_COUNT: retry_count,
        },
    )


class use_span:  # noqa: N801 - named and used as ``opentelemetry.trace.use_span``
    """``opentelemetry.trace.use_span``, the same behaviour without a generator: ``span`` is the
    current span inside the ``with``; an exception leaving it is recorded on the span and sets
    its status to ERROR; the span is ended on exit only with ``end_on_exit``."""

    __slots__ = ("span", "end_on_exit", "record_exception", "set_status_on_exception", "_token")

    def __init__(self, span: Span, end_on_exit: bool = False, record_exception: bool = True,
                 set_status_on_exception: bool = True) -> None:
        self.span = span
        self.end_on_exit = end_on_exit
        self.record_exception = record_exception
        self.set_status_on_exception = set_status_on_exception

    def __enter__(self) -> Span:
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self.span

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        span = self.span
        try:
            otel_context.detach(self._token)
            if isinstance(exc, Exception) and span.is_recording():
                if self.record_exception:
                    span.record_exception(exc)
                if self.set_status_on_exception:
                    span.set_status(Status(StatusCode.ERROR, f"{type(exc).__name__}: {exc}"))
        finally:
            if self.end_on_exit:
                span.end()


def inject_context(context: Context | None = None) -> dict[str, str]:
    """W3C ``traceparent``/``tracestate``/``baggage`` of ``context`` (default: current)."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier, context=context)
    return carrier


def extract_context(carrier: Mapping[str, str]) -> Context | None:
    """The trace context a caller sent (``traceparent`` metadata), or None when it sent none:
    a run started by another server's delegation joins that server's trace."""
    if "traceparent" not in carrier:
        return None
    return propagate.extract(dict(carrier))


def current_span() -> Span:
    return trace.get_current_span()
