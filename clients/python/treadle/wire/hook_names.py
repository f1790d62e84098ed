"""The hook names of the attach protocol: Python hook name <-> ``Hook`` enum value.

Below both halves of the hook conversion (``server_hooks`` and ``sdk_hooks``), so neither imports
the other.
"""

from __future__ import annotations

from ..v1 import processor_service_pb2 as pb

HOOK_ENUM: dict[str, int] = {
    "process_input": pb.HOOK_PROCESS_INPUT,
    "process_input_step": pb.HOOK_PROCESS_INPUT_STEP,
    "process_llm_request": pb.HOOK_PROCESS_LLM_REQUEST,
    "process_llm_response": pb.HOOK_PROCESS_LLM_RESPONSE,
    "process_api_error": pb.HOOK_PROCESS_API_ERROR,
    "process_output_stream": pb.HOOK_PROCESS_OUTPUT_STREAM,
    "process_output_step": pb.HOOK_PROCESS_OUTPUT_STEP,
    "process_tool_result": pb.HOOK_PROCESS_TOOL_RESULT,
    "process_output_result": pb.HOOK_PROCESS_OUTPUT_RESULT,
    "before_tool_call": pb.HOOK_BEFORE_TOOL_CALL,
    "after_tool_call": pb.HOOK_AFTER_TOOL_CALL,
    "on_violation": pb.HOOK_ON_VIOLATION,
    "on_delegation_start": pb.HOOK_ON_DELEGATION_START,
    "on_delegation_complete": pb.HOOK_ON_DELEGATION_COMPLETE,
    "transform_tool_payload": pb.HOOK_TRANSFORM_TOOL_PAYLOAD,
    "resolve_agent": pb.HOOK_RESOLVE_AGENT,
}
"""Python hook name -> ``Hook`` enum value; the ``Invocation.args`` branch has the same name."""
HOOK_NAME: dict[int, str] = {v: k for k, v in HOOK_ENUM.items()}
