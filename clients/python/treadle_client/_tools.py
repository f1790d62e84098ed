"""Serving tools to Treadle servers over ``ToolService.Attach``.

A tool is a ``treadle_client.Tool`` (or a function decorated with ``treadle_client.tool``): the
same object an in-process tool is. ``execute(args, ctx)`` gets a ``ToolContext`` whose ``writer``
collects custom ``data-*`` chunks, which the server emits before the tool's result.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
from opentelemetry.trace import TracerProvider

from treadle.wire.data import chunk_to_proto, dict_to_struct, py_to_value, struct_to_dict, value_to_py
from treadle.core.tool import Tool, ToolContext
from treadle.v1 import prompt_pb2, tool_service_pb2, tool_service_pb2_grpc

from ._attach import (
    PROTOCOL_VERSION,
    Attachment,
    Send,
    as_targets,
    cancel_all,
    collecting_writer,
    default_instance_id,
)
from ._connect import Connect, TLSConfig
from ._tracing import ParentContexts, invocation_span, mark_error, tracer_from

log = logging.getLogger("treadle_client")


def tool_definition(tool: Tool) -> prompt_pb2.ToolDefinition:
    definition = prompt_pb2.ToolDefinition(name=tool.name, description=tool.description)
    dict_to_struct(tool.input_schema, definition.input_schema)
    if tool.output_schema is not None:
        dict_to_struct(tool.output_schema, definition.output_schema)
    return definition


class _ToolSession:
    def __init__(self, tools: dict[str, Tool], instance_id: str, tracer: Any, send: Send) -> None:
        self._tools = tools
        self._instance_id = instance_id
        self._tracer = tracer
        self._parents = ParentContexts()
        self._send = send
        self._running: dict[str, asyncio.Task[None]] = {}

    def handshake(self) -> tool_service_pb2.ToolServiceAttachRequest:
        return tool_service_pb2.ToolServiceAttachRequest(handshake=tool_service_pb2.ToolHandshake(
            protocol_versions=[PROTOCOL_VERSION],
            tools=[tool_definition(t) for t in self._tools.values()],
            instance_id=self._instance_id,
        ))

    def on_message(self, message: tool_service_pb2.ToolServiceAttachResponse) -> bool:
        kind = message.WhichOneof("message")
        if kind == "call":
            call = message.call
            task = asyncio.create_task(self._run(call))
            self._running[call.invocation_id] = task
            task.add_done_callback(lambda _: self._running.pop(call.invocation_id, None))
        elif kind == "cancel":
            running = self._running.get(message.cancel.invocation_id)
            if running is not None:
                running.cancel()
        elif kind == "drain":
            log.info("server is draining; will reconnect when it closes the stream")
        return kind == "welcome"

    async def close(self) -> None:
        await cancel_all(self._running.values())

    async def _run(self, call: tool_service_pb2.ToolInvocation) -> None:
        result = tool_service_pb2.ToolCallResult(invocation_id=call.invocation_id)
        writer, written = collecting_writer(call.run_id)
        ctx = ToolContext(
            tool_call_id=call.tool_call_id,
            run_id=call.run_id,
            agent_id=call.agent_id,
            request_context=struct_to_dict(call.request_context),
            writer=writer,
            thread_id=call.thread_id,
            resource_id=call.resource_id,
        )
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.tool_name,
            "gen_ai.tool.call.id": call.tool_call_id,
            "treadle.run.id": call.run_id,
        }
        with invocation_span(self._tracer, f"execute_tool {call.tool_name}", call.trace_context,
                             attributes, self._parents) as span:
            tool = self._tools.get(call.tool_name)
            try:
                if tool is None:
                    raise LookupError(f"tool {call.tool_name!r} is not served by this process")
                args = value_to_py(call.args) if call.HasField("args") else None
                py_to_value(await tool.run(args, ctx), result.output)
            except Exception as e:  # the model receives the message as a tool error
                mark_error(span, e)
                result.error = str(e) or type(e).__name__
        for chunk in written:
            result.custom_chunks.append(chunk_to_proto(chunk).data)
        self._send(tool_service_pb2.ToolServiceAttachRequest(result=result))


def _open(channel: grpc.aio.Channel, requests: AsyncIterator[Any], metadata: Any) -> Any:
    return tool_service_pb2_grpc.ToolServiceStub(channel).Attach(requests, metadata=metadata)


async def serve_tools(
    tools: Sequence[Tool],
    targets: str | Sequence[str],
    *,
    instance_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
    backoff: tuple[float, float] = (0.1, 5.0),
    token: str | None = None,
    tls: TLSConfig | None = None,
) -> Attachment:
    """Serve ``tools`` to every server in ``targets`` until ``await attachment.close()``.

    Each call runs in a span that is a child of the server's ``execute_tool`` span. ``token``
    (default: ``TREADLE_TOKEN``) and ``tls`` are as for ``AgentClient``.
    """
    by_name: dict[str, Tool] = {}
    for t in tools:
        if not isinstance(t, Tool):
            raise TypeError(f"serve_tools takes treadle.tools.Tool objects, got {type(t).__name__}")
        if t.name in by_name:
            raise ValueError(f"tool {t.name!r} is given twice")
        by_name[t.name] = t
    if not by_name:
        raise ValueError("give at least one tool")
    tracer = tracer_from(tracer_provider)
    iid = instance_id or default_instance_id()
    return Attachment(
        as_targets(targets), _open, lambda send: _ToolSession(by_name, iid, tracer, send), backoff,
        Connect(tls, token), "tool " + ", ".join(by_name),
    )
