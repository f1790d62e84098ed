"""A tool served by an attached process: a ``Tool`` whose ``execute`` goes over the tool stream.

Agents name remote tools like local ones. The registry asks ``resolve`` for names no in-process
tool has. Decision: a name that is not attached when the run is planned still resolves, to a
placeholder with an empty object schema, rather than failing the run: a tool process may attach
(or re-attach after a restart) at any moment, so ``execute`` looks the name up again at call
time, and if it is still not attached the model gets the tool error ``tool NAME is not
attached`` and the run goes on. When it is attached at plan time the model sees the attached
description and schema.
"""

from __future__ import annotations

from typing import Any

from ..core.chunks import Chunk
from ..tools import Tool, ToolContext
from ..tracing import inject_context
from ..v1 import tool_service_pb2
from ..wire.data import dict_to_struct, py_to_value, struct_to_dict, value_to_py
from .tool_hub import ToolCallError, ToolHub


class RemoteToolError(Exception):
    """What the remote tool reported as its error; the model receives the message."""


def remote_tool(hub: ToolHub, name: str) -> Tool:
    """A ``Tool`` for ``name`` described by its attached declaration, or a placeholder."""
    definition = hub.definition(name)
    description = f"(tool {name} is not attached)"
    input_schema: dict[str, Any] = {"type": "object", "properties": {}}
    output_schema: dict[str, Any] | None = None
    if definition is not None:
        description = definition.description
        if definition.HasField("input_schema"):
            input_schema = struct_to_dict(definition.input_schema)
        if definition.HasField("output_schema"):
            output_schema = struct_to_dict(definition.output_schema)

    async def execute(args: Any, ctx: ToolContext) -> Any:
        return await call_remote_tool(hub, name, args, ctx)

    return Tool(name=name, execute=execute, description=description,
                input_schema=input_schema, output_schema=output_schema)


async def call_remote_tool(hub: ToolHub, name: str, args: Any, ctx: ToolContext) -> Any:
    """Run one call on an attached replica; custom chunks are written before the result.

    The loop runs ``execute`` inside the ``execute_tool`` span, so the current context is the
    one the tool process parents its span on.
    """
    invocation = tool_service_pb2.ToolInvocation(
        tool_name=name,
        tool_call_id=ctx.tool_call_id,
        run_id=ctx.run_id,
        agent_id=ctx.agent_id,
        thread_id=ctx.thread_id,
        resource_id=ctx.resource_id,
    )
    py_to_value(args, invocation.args)
    if ctx.request_context:
        dict_to_struct(ctx.request_context, invocation.request_context)
    carrier = inject_context()
    invocation.trace_context.traceparent = carrier.get("traceparent", "")
    invocation.trace_context.tracestate = carrier.get("tracestate", "")
    invocation.trace_context.baggage = carrier.get("baggage", "")
    try:
        result = await hub.call(invocation)
    except ToolCallError as e:
        raise RemoteToolError(str(e)) from None
    if ctx.writer is not None:
        for data in result.custom_chunks:
            await ctx.writer.custom(Chunk.custom(
                data.name, value_to_py(data.data) if data.HasField("data") else None,
                transient=data.transient, id=data.id,
            ))
    outcome = result.WhichOneof("outcome")
    if outcome == "error":
        raise RemoteToolError(result.error or f"tool {name!r} failed")
    if outcome is None:  # neither output nor error: the model must not take silence for success
        raise RemoteToolError(f"tool {name!r} answered without an outcome (neither output nor error)")
    return value_to_py(result.output)
