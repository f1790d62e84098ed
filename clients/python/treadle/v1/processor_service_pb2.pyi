import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import agent_pb2 as _agent_pb2
from treadle.v1 import chunk_pb2 as _chunk_pb2
from treadle.v1 import message_pb2 as _message_pb2
from treadle.v1 import prompt_pb2 as _prompt_pb2
from treadle.v1 import remote_pb2 as _remote_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Hook(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOOK_UNSPECIFIED: _ClassVar[Hook]
    HOOK_PROCESS_INPUT: _ClassVar[Hook]
    HOOK_PROCESS_INPUT_STEP: _ClassVar[Hook]
    HOOK_PROCESS_LLM_REQUEST: _ClassVar[Hook]
    HOOK_PROCESS_LLM_RESPONSE: _ClassVar[Hook]
    HOOK_PROCESS_API_ERROR: _ClassVar[Hook]
    HOOK_PROCESS_OUTPUT_STREAM: _ClassVar[Hook]
    HOOK_PROCESS_OUTPUT_STEP: _ClassVar[Hook]
    HOOK_PROCESS_TOOL_RESULT: _ClassVar[Hook]
    HOOK_PROCESS_OUTPUT_RESULT: _ClassVar[Hook]
    HOOK_BEFORE_TOOL_CALL: _ClassVar[Hook]
    HOOK_AFTER_TOOL_CALL: _ClassVar[Hook]
    HOOK_ON_VIOLATION: _ClassVar[Hook]
    HOOK_ON_DELEGATION_START: _ClassVar[Hook]
    HOOK_ON_DELEGATION_COMPLETE: _ClassVar[Hook]
    HOOK_TRANSFORM_TOOL_PAYLOAD: _ClassVar[Hook]
    HOOK_RESOLVE_AGENT: _ClassVar[Hook]

class HookMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOOK_MODE_UNSPECIFIED: _ClassVar[HookMode]
    HOOK_MODE_MUTATE: _ClassVar[HookMode]
    HOOK_MODE_OBSERVE: _ClassVar[HookMode]

class StreamDelivery(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STREAM_DELIVERY_UNSPECIFIED: _ClassVar[StreamDelivery]
    STREAM_DELIVERY_PER_CHUNK: _ClassVar[StreamDelivery]
    STREAM_DELIVERY_WINDOWED: _ClassVar[StreamDelivery]

class MessageSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MESSAGE_SOURCE_UNSPECIFIED: _ClassVar[MessageSource]
    MESSAGE_SOURCE_MEMORY: _ClassVar[MessageSource]
    MESSAGE_SOURCE_INPUT: _ClassVar[MessageSource]
    MESSAGE_SOURCE_RESPONSE: _ClassVar[MessageSource]
    MESSAGE_SOURCE_CONTEXT: _ClassVar[MessageSource]
HOOK_UNSPECIFIED: Hook
HOOK_PROCESS_INPUT: Hook
HOOK_PROCESS_INPUT_STEP: Hook
HOOK_PROCESS_LLM_REQUEST: Hook
HOOK_PROCESS_LLM_RESPONSE: Hook
HOOK_PROCESS_API_ERROR: Hook
HOOK_PROCESS_OUTPUT_STREAM: Hook
HOOK_PROCESS_OUTPUT_STEP: Hook
HOOK_PROCESS_TOOL_RESULT: Hook
HOOK_PROCESS_OUTPUT_RESULT: Hook
HOOK_BEFORE_TOOL_CALL: Hook
HOOK_AFTER_TOOL_CALL: Hook
HOOK_ON_VIOLATION: Hook
HOOK_ON_DELEGATION_START: Hook
HOOK_ON_DELEGATION_COMPLETE: Hook
HOOK_TRANSFORM_TOOL_PAYLOAD: Hook
HOOK_RESOLVE_AGENT: Hook
HOOK_MODE_UNSPECIFIED: HookMode
HOOK_MODE_MUTATE: HookMode
HOOK_MODE_OBSERVE: HookMode
STREAM_DELIVERY_UNSPECIFIED: StreamDelivery
STREAM_DELIVERY_PER_CHUNK: StreamDelivery
STREAM_DELIVERY_WINDOWED: StreamDelivery
MESSAGE_SOURCE_UNSPECIFIED: MessageSource
MESSAGE_SOURCE_MEMORY: MessageSource
MESSAGE_SOURCE_INPUT: MessageSource
MESSAGE_SOURCE_RESPONSE: MessageSource
MESSAGE_SOURCE_CONTEXT: MessageSource

class ProcessorServiceAttachRequest(_message.Message):
    __slots__ = ("handshake", "result", "results")
    HANDSHAKE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    handshake: ProcessorHandshake
    result: InvocationResult
    results: InvocationResults
    def __init__(self, handshake: _Optional[_Union[ProcessorHandshake, _Mapping]] = ..., result: _Optional[_Union[InvocationResult, _Mapping]] = ..., results: _Optional[_Union[InvocationResults, _Mapping]] = ...) -> None: ...

class InvocationResults(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[InvocationResult]
    def __init__(self, results: _Optional[_Iterable[_Union[InvocationResult, _Mapping]]] = ...) -> None: ...

class Invocations(_message.Message):
    __slots__ = ("invocations",)
    INVOCATIONS_FIELD_NUMBER: _ClassVar[int]
    invocations: _containers.RepeatedCompositeFieldContainer[Invocation]
    def __init__(self, invocations: _Optional[_Iterable[_Union[Invocation, _Mapping]]] = ...) -> None: ...

class ProcessorServiceAttachResponse(_message.Message):
    __slots__ = ("welcome", "invocation", "cancel", "drain", "run_ended", "invocations")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    RUN_ENDED_FIELD_NUMBER: _ClassVar[int]
    INVOCATIONS_FIELD_NUMBER: _ClassVar[int]
    welcome: ProcessorWelcome
    invocation: Invocation
    cancel: _remote_pb2.CancelInvocation
    drain: _remote_pb2.Drain
    run_ended: RunEnded
    invocations: Invocations
    def __init__(self, welcome: _Optional[_Union[ProcessorWelcome, _Mapping]] = ..., invocation: _Optional[_Union[Invocation, _Mapping]] = ..., cancel: _Optional[_Union[_remote_pb2.CancelInvocation, _Mapping]] = ..., drain: _Optional[_Union[_remote_pb2.Drain, _Mapping]] = ..., run_ended: _Optional[_Union[RunEnded, _Mapping]] = ..., invocations: _Optional[_Union[Invocations, _Mapping]] = ...) -> None: ...

class RunEnded(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ProcessorHandshake(_message.Message):
    __slots__ = ("protocol_versions", "processors", "instance_id")
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    processors: _containers.RepeatedCompositeFieldContainer[ProcessorDeclaration]
    instance_id: str
    def __init__(self, protocol_versions: _Optional[_Iterable[int]] = ..., processors: _Optional[_Iterable[_Union[ProcessorDeclaration, _Mapping]]] = ..., instance_id: _Optional[str] = ...) -> None: ...

class ProcessorDeclaration(_message.Message):
    __slots__ = ("id", "name", "description", "hooks")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    HOOKS_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    hooks: _containers.RepeatedCompositeFieldContainer[HookDeclaration]
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., hooks: _Optional[_Iterable[_Union[HookDeclaration, _Mapping]]] = ...) -> None: ...

class HookDeclaration(_message.Message):
    __slots__ = ("hook", "mode", "timeout", "process_data_parts", "delivery", "max_window", "max_in_flight", "tool_names")
    HOOK_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_DATA_PARTS_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_FIELD_NUMBER: _ClassVar[int]
    MAX_WINDOW_FIELD_NUMBER: _ClassVar[int]
    MAX_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAMES_FIELD_NUMBER: _ClassVar[int]
    hook: Hook
    mode: HookMode
    timeout: _duration_pb2.Duration
    process_data_parts: bool
    delivery: StreamDelivery
    max_window: int
    max_in_flight: int
    tool_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, hook: _Optional[_Union[Hook, str]] = ..., mode: _Optional[_Union[HookMode, str]] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., process_data_parts: _Optional[bool] = ..., delivery: _Optional[_Union[StreamDelivery, str]] = ..., max_window: _Optional[int] = ..., max_in_flight: _Optional[int] = ..., tool_names: _Optional[_Iterable[str]] = ...) -> None: ...

class ProcessorWelcome(_message.Message):
    __slots__ = ("protocol_version", "processors", "server_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    processors: _containers.RepeatedCompositeFieldContainer[ProcessorDeclaration]
    server_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., processors: _Optional[_Iterable[_Union[ProcessorDeclaration, _Mapping]]] = ..., server_id: _Optional[str] = ...) -> None: ...

class ListedMessage(_message.Message):
    __slots__ = ("message", "source")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    message: _message_pb2.Message
    source: MessageSource
    def __init__(self, message: _Optional[_Union[_message_pb2.Message, _Mapping]] = ..., source: _Optional[_Union[MessageSource, str]] = ...) -> None: ...

class MessageListSnapshot(_message.Message):
    __slots__ = ("messages", "system_messages")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[ListedMessage]
    system_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.SystemMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[ListedMessage, _Mapping]]] = ..., system_messages: _Optional[_Iterable[_Union[_message_pb2.SystemMessage, _Mapping]]] = ...) -> None: ...

class Invocation(_message.Message):
    __slots__ = ("invocation_id", "processor_id", "hook", "run_id", "agent_id", "thread_id", "resource_id", "step_number", "retry_count", "request_context", "state", "trace_context", "deadline", "processor_index", "timeout", "process_input", "process_input_step", "process_llm_request", "process_llm_response", "process_api_error", "process_output_stream", "process_output_step", "process_tool_result", "process_output_result", "before_tool_call", "after_tool_call", "on_violation", "on_delegation_start", "on_delegation_complete", "transform_tool_payload", "resolve_agent")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    HOOK_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    RETRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_INDEX_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_INPUT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_INPUT_STEP_FIELD_NUMBER: _ClassVar[int]
    PROCESS_LLM_REQUEST_FIELD_NUMBER: _ClassVar[int]
    PROCESS_LLM_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    PROCESS_API_ERROR_FIELD_NUMBER: _ClassVar[int]
    PROCESS_OUTPUT_STREAM_FIELD_NUMBER: _ClassVar[int]
    PROCESS_OUTPUT_STEP_FIELD_NUMBER: _ClassVar[int]
    PROCESS_TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_OUTPUT_RESULT_FIELD_NUMBER: _ClassVar[int]
    BEFORE_TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    AFTER_TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    ON_VIOLATION_FIELD_NUMBER: _ClassVar[int]
    ON_DELEGATION_START_FIELD_NUMBER: _ClassVar[int]
    ON_DELEGATION_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    TRANSFORM_TOOL_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    RESOLVE_AGENT_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    processor_id: str
    hook: Hook
    run_id: str
    agent_id: str
    thread_id: str
    resource_id: str
    step_number: int
    retry_count: int
    request_context: _struct_pb2.Struct
    state: ProcessorState
    trace_context: _remote_pb2.TraceContext
    deadline: _timestamp_pb2.Timestamp
    processor_index: int
    timeout: _duration_pb2.Duration
    process_input: ProcessInputArgs
    process_input_step: ProcessInputStepArgs
    process_llm_request: ProcessLLMRequestArgs
    process_llm_response: ProcessLLMResponseArgs
    process_api_error: ProcessAPIErrorArgs
    process_output_stream: ProcessOutputStreamArgs
    process_output_step: ProcessOutputStepArgs
    process_tool_result: ProcessToolResultArgs
    process_output_result: ProcessOutputResultArgs
    before_tool_call: BeforeToolCallArgs
    after_tool_call: AfterToolCallArgs
    on_violation: OnViolationArgs
    on_delegation_start: OnDelegationStartArgs
    on_delegation_complete: OnDelegationCompleteArgs
    transform_tool_payload: TransformToolPayloadArgs
    resolve_agent: ResolveAgentArgs
    def __init__(self, invocation_id: _Optional[str] = ..., processor_id: _Optional[str] = ..., hook: _Optional[_Union[Hook, str]] = ..., run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., step_number: _Optional[int] = ..., retry_count: _Optional[int] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., state: _Optional[_Union[ProcessorState, _Mapping]] = ..., trace_context: _Optional[_Union[_remote_pb2.TraceContext, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., processor_index: _Optional[int] = ..., timeout: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., process_input: _Optional[_Union[ProcessInputArgs, _Mapping]] = ..., process_input_step: _Optional[_Union[ProcessInputStepArgs, _Mapping]] = ..., process_llm_request: _Optional[_Union[ProcessLLMRequestArgs, _Mapping]] = ..., process_llm_response: _Optional[_Union[ProcessLLMResponseArgs, _Mapping]] = ..., process_api_error: _Optional[_Union[ProcessAPIErrorArgs, _Mapping]] = ..., process_output_stream: _Optional[_Union[ProcessOutputStreamArgs, _Mapping]] = ..., process_output_step: _Optional[_Union[ProcessOutputStepArgs, _Mapping]] = ..., process_tool_result: _Optional[_Union[ProcessToolResultArgs, _Mapping]] = ..., process_output_result: _Optional[_Union[ProcessOutputResultArgs, _Mapping]] = ..., before_tool_call: _Optional[_Union[BeforeToolCallArgs, _Mapping]] = ..., after_tool_call: _Optional[_Union[AfterToolCallArgs, _Mapping]] = ..., on_violation: _Optional[_Union[OnViolationArgs, _Mapping]] = ..., on_delegation_start: _Optional[_Union[OnDelegationStartArgs, _Mapping]] = ..., on_delegation_complete: _Optional[_Union[OnDelegationCompleteArgs, _Mapping]] = ..., transform_tool_payload: _Optional[_Union[TransformToolPayloadArgs, _Mapping]] = ..., resolve_agent: _Optional[_Union[ResolveAgentArgs, _Mapping]] = ...) -> None: ...

class ProcessorState(_message.Message):
    __slots__ = ("value", "version")
    VALUE_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    value: _struct_pb2.Struct
    version: int
    def __init__(self, value: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...

class ProcessInputArgs(_message.Message):
    __slots__ = ("message_list",)
    MESSAGE_LIST_FIELD_NUMBER: _ClassVar[int]
    message_list: MessageListSnapshot
    def __init__(self, message_list: _Optional[_Union[MessageListSnapshot, _Mapping]] = ...) -> None: ...

class ProcessInputStepArgs(_message.Message):
    __slots__ = ("message_list", "steps", "model", "tool_choice", "active_tools", "tools", "provider_options", "model_settings", "structured_output")
    MESSAGE_LIST_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    message_list: MessageListSnapshot
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    model: str
    tool_choice: _agent_pb2.ToolChoice
    active_tools: _containers.RepeatedScalarFieldContainer[str]
    tools: _containers.RepeatedCompositeFieldContainer[_prompt_pb2.ToolDefinition]
    provider_options: _struct_pb2.Struct
    model_settings: _agent_pb2.ModelSettings
    structured_output: _agent_pb2.StructuredOutput
    def __init__(self, message_list: _Optional[_Union[MessageListSnapshot, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ..., model: _Optional[str] = ..., tool_choice: _Optional[_Union[_agent_pb2.ToolChoice, _Mapping]] = ..., active_tools: _Optional[_Iterable[str]] = ..., tools: _Optional[_Iterable[_Union[_prompt_pb2.ToolDefinition, _Mapping]]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model_settings: _Optional[_Union[_agent_pb2.ModelSettings, _Mapping]] = ..., structured_output: _Optional[_Union[_agent_pb2.StructuredOutput, _Mapping]] = ...) -> None: ...

class ProcessLLMRequestArgs(_message.Message):
    __slots__ = ("prompt", "model", "steps")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    prompt: _containers.RepeatedCompositeFieldContainer[_prompt_pb2.PromptMessage]
    model: str
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    def __init__(self, prompt: _Optional[_Iterable[_Union[_prompt_pb2.PromptMessage, _Mapping]]] = ..., model: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ...) -> None: ...

class ProcessLLMResponseArgs(_message.Message):
    __slots__ = ("chunks", "model", "steps", "from_cache")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    FROM_CACHE_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    model: str
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    from_cache: bool
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ..., model: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ..., from_cache: _Optional[bool] = ...) -> None: ...

class APIError(_message.Message):
    __slots__ = ("message", "status_code", "body", "provider", "model_id", "is_retryable")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    BODY_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    IS_RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    message: str
    status_code: int
    body: _struct_pb2.Value
    provider: str
    model_id: str
    is_retryable: bool
    def __init__(self, message: _Optional[str] = ..., status_code: _Optional[int] = ..., body: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., provider: _Optional[str] = ..., model_id: _Optional[str] = ..., is_retryable: _Optional[bool] = ...) -> None: ...

class ProcessAPIErrorArgs(_message.Message):
    __slots__ = ("error", "message_list", "steps")
    ERROR_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_LIST_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    error: APIError
    message_list: MessageListSnapshot
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    def __init__(self, error: _Optional[_Union[APIError, _Mapping]] = ..., message_list: _Optional[_Union[MessageListSnapshot, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ...) -> None: ...

class ProcessOutputStreamArgs(_message.Message):
    __slots__ = ("parts",)
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, parts: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...

class ProcessOutputStepArgs(_message.Message):
    __slots__ = ("message_list", "finish_reason", "tool_calls", "text", "usage", "steps", "provider_metadata")
    MESSAGE_LIST_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    message_list: MessageListSnapshot
    finish_reason: _chunk_pb2.FinishReason
    tool_calls: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.ToolCall]
    text: str
    usage: _chunk_pb2.Usage
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    provider_metadata: _struct_pb2.Struct
    def __init__(self, message_list: _Optional[_Union[MessageListSnapshot, _Mapping]] = ..., finish_reason: _Optional[_Union[_chunk_pb2.FinishReason, str]] = ..., tool_calls: _Optional[_Iterable[_Union[_chunk_pb2.ToolCall, _Mapping]]] = ..., text: _Optional[str] = ..., usage: _Optional[_Union[_chunk_pb2.Usage, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ProcessToolResultArgs(_message.Message):
    __slots__ = ("message_list", "tool_name", "tool_call_id", "args", "result", "provider_executed", "steps")
    MESSAGE_LIST_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    message_list: MessageListSnapshot
    tool_name: str
    tool_call_id: str
    args: _struct_pb2.Value
    result: _struct_pb2.Value
    provider_executed: bool
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    def __init__(self, message_list: _Optional[_Union[MessageListSnapshot, _Mapping]] = ..., tool_name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., provider_executed: _Optional[bool] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ...) -> None: ...

class BeforeToolCallArgs(_message.Message):
    __slots__ = ("tool_name", "tool_call_id", "args")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    tool_call_id: str
    args: _struct_pb2.Value
    def __init__(self, tool_name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class AfterToolCallArgs(_message.Message):
    __slots__ = ("tool_name", "tool_call_id", "args", "output", "error")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    tool_call_id: str
    args: _struct_pb2.Value
    output: _struct_pb2.Value
    error: str
    def __init__(self, tool_name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class OnViolationArgs(_message.Message):
    __slots__ = ("processor_id", "message", "detail", "hook")
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    HOOK_FIELD_NUMBER: _ClassVar[int]
    processor_id: str
    message: str
    detail: _struct_pb2.Value
    hook: str
    def __init__(self, processor_id: _Optional[str] = ..., message: _Optional[str] = ..., detail: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., hook: _Optional[str] = ...) -> None: ...

class OnDelegationStartArgs(_message.Message):
    __slots__ = ("key", "sub_agent_id", "tool_call_id", "prompt", "instructions", "max_steps", "iteration")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SUB_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    ITERATION_FIELD_NUMBER: _ClassVar[int]
    key: str
    sub_agent_id: str
    tool_call_id: str
    prompt: str
    instructions: str
    max_steps: int
    iteration: int
    def __init__(self, key: _Optional[str] = ..., sub_agent_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., prompt: _Optional[str] = ..., instructions: _Optional[str] = ..., max_steps: _Optional[int] = ..., iteration: _Optional[int] = ...) -> None: ...

class DelegationStartOutcome(_message.Message):
    __slots__ = ("reject", "rejection_reason", "modified_prompt", "modified_instructions", "modified_max_steps")
    REJECT_FIELD_NUMBER: _ClassVar[int]
    REJECTION_REASON_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_PROMPT_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    MODIFIED_MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    reject: bool
    rejection_reason: str
    modified_prompt: str
    modified_instructions: str
    modified_max_steps: int
    def __init__(self, reject: _Optional[bool] = ..., rejection_reason: _Optional[str] = ..., modified_prompt: _Optional[str] = ..., modified_instructions: _Optional[str] = ..., modified_max_steps: _Optional[int] = ...) -> None: ...

class OnDelegationCompleteArgs(_message.Message):
    __slots__ = ("key", "sub_agent_id", "tool_call_id", "prompt", "result", "success", "error", "duration")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SUB_AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SUCCESS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DURATION_FIELD_NUMBER: _ClassVar[int]
    key: str
    sub_agent_id: str
    tool_call_id: str
    prompt: str
    result: _struct_pb2.Value
    success: bool
    error: str
    duration: _duration_pb2.Duration
    def __init__(self, key: _Optional[str] = ..., sub_agent_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., prompt: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., success: _Optional[bool] = ..., error: _Optional[str] = ..., duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class DelegationCompleteOutcome(_message.Message):
    __slots__ = ("feedback", "bail")
    FEEDBACK_FIELD_NUMBER: _ClassVar[int]
    BAIL_FIELD_NUMBER: _ClassVar[int]
    feedback: str
    bail: bool
    def __init__(self, feedback: _Optional[str] = ..., bail: _Optional[bool] = ...) -> None: ...

class TransformToolPayloadArgs(_message.Message):
    __slots__ = ("target", "phase", "tool_name", "tool_call_id", "payload")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    target: str
    phase: str
    tool_name: str
    tool_call_id: str
    payload: _struct_pb2.Value
    def __init__(self, target: _Optional[str] = ..., phase: _Optional[str] = ..., tool_name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class TransformedPayload(_message.Message):
    __slots__ = ("payload",)
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    payload: _struct_pb2.Value
    def __init__(self, payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class OutputResult(_message.Message):
    __slots__ = ("text", "usage", "finish_reason", "steps")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    text: str
    usage: _chunk_pb2.Usage
    finish_reason: _chunk_pb2.FinishReason
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    def __init__(self, text: _Optional[str] = ..., usage: _Optional[_Union[_chunk_pb2.Usage, _Mapping]] = ..., finish_reason: _Optional[_Union[_chunk_pb2.FinishReason, str]] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ...) -> None: ...

class ProcessOutputResultArgs(_message.Message):
    __slots__ = ("message_list", "result")
    MESSAGE_LIST_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    message_list: MessageListSnapshot
    result: OutputResult
    def __init__(self, message_list: _Optional[_Union[MessageListSnapshot, _Mapping]] = ..., result: _Optional[_Union[OutputResult, _Mapping]] = ...) -> None: ...

class InvocationResult(_message.Message):
    __slots__ = ("invocation_id", "unchanged", "replace", "abort", "retry", "error", "stream", "skip_tool", "delegation_start", "delegation_complete", "transformed", "agent_overrides", "state", "custom_chunks")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STREAM_FIELD_NUMBER: _ClassVar[int]
    SKIP_TOOL_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_START_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_COMPLETE_FIELD_NUMBER: _ClassVar[int]
    TRANSFORMED_FIELD_NUMBER: _ClassVar[int]
    AGENT_OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    unchanged: UnchangedOutcome
    replace: ReplaceOutcome
    abort: AbortOutcome
    retry: RetryOutcome
    error: ErrorOutcome
    stream: StreamOutcomes
    skip_tool: SkipToolOutcome
    delegation_start: DelegationStartOutcome
    delegation_complete: DelegationCompleteOutcome
    transformed: TransformedPayload
    agent_overrides: AgentOverrides
    state: ProcessorState
    custom_chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.DataChunk]
    def __init__(self, invocation_id: _Optional[str] = ..., unchanged: _Optional[_Union[UnchangedOutcome, _Mapping]] = ..., replace: _Optional[_Union[ReplaceOutcome, _Mapping]] = ..., abort: _Optional[_Union[AbortOutcome, _Mapping]] = ..., retry: _Optional[_Union[RetryOutcome, _Mapping]] = ..., error: _Optional[_Union[ErrorOutcome, _Mapping]] = ..., stream: _Optional[_Union[StreamOutcomes, _Mapping]] = ..., skip_tool: _Optional[_Union[SkipToolOutcome, _Mapping]] = ..., delegation_start: _Optional[_Union[DelegationStartOutcome, _Mapping]] = ..., delegation_complete: _Optional[_Union[DelegationCompleteOutcome, _Mapping]] = ..., transformed: _Optional[_Union[TransformedPayload, _Mapping]] = ..., agent_overrides: _Optional[_Union[AgentOverrides, _Mapping]] = ..., state: _Optional[_Union[ProcessorState, _Mapping]] = ..., custom_chunks: _Optional[_Iterable[_Union[_chunk_pb2.DataChunk, _Mapping]]] = ...) -> None: ...

class SkipToolOutcome(_message.Message):
    __slots__ = ("output",)
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    output: _struct_pb2.Value
    def __init__(self, output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class UnchangedOutcome(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReplaceOutcome(_message.Message):
    __slots__ = ("messages", "system_messages", "step_overrides", "prompt", "cached_response")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    CACHED_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    messages: MessageListReplacement
    system_messages: _agent_pb2.SystemMessages
    step_overrides: StepOverrides
    prompt: PromptReplacement
    cached_response: CachedResponse
    def __init__(self, messages: _Optional[_Union[MessageListReplacement, _Mapping]] = ..., system_messages: _Optional[_Union[_agent_pb2.SystemMessages, _Mapping]] = ..., step_overrides: _Optional[_Union[StepOverrides, _Mapping]] = ..., prompt: _Optional[_Union[PromptReplacement, _Mapping]] = ..., cached_response: _Optional[_Union[CachedResponse, _Mapping]] = ...) -> None: ...

class MessageListReplacement(_message.Message):
    __slots__ = ("messages", "sources")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    sources: _containers.RepeatedScalarFieldContainer[MessageSource]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., sources: _Optional[_Iterable[_Union[MessageSource, str]]] = ...) -> None: ...

class PromptReplacement(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_prompt_pb2.PromptMessage]
    def __init__(self, messages: _Optional[_Iterable[_Union[_prompt_pb2.PromptMessage, _Mapping]]] = ...) -> None: ...

class CachedResponse(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...

class ActiveTools(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class StepOverrides(_message.Message):
    __slots__ = ("model", "tool_choice", "active_tools", "provider_options", "model_settings", "structured_output", "tools")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    model: str
    tool_choice: _agent_pb2.ToolChoice
    active_tools: ActiveTools
    provider_options: _struct_pb2.Struct
    model_settings: _agent_pb2.ModelSettings
    structured_output: _agent_pb2.StructuredOutput
    tools: StepTools
    def __init__(self, model: _Optional[str] = ..., tool_choice: _Optional[_Union[_agent_pb2.ToolChoice, _Mapping]] = ..., active_tools: _Optional[_Union[ActiveTools, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model_settings: _Optional[_Union[_agent_pb2.ModelSettings, _Mapping]] = ..., structured_output: _Optional[_Union[_agent_pb2.StructuredOutput, _Mapping]] = ..., tools: _Optional[_Union[StepTools, _Mapping]] = ...) -> None: ...

class StepTools(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class AbortOutcome(_message.Message):
    __slots__ = ("reason", "retry", "metadata")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    reason: str
    retry: bool
    metadata: _struct_pb2.Value
    def __init__(self, reason: _Optional[str] = ..., retry: _Optional[bool] = ..., metadata: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class RetryOutcome(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: MessageListReplacement
    def __init__(self, messages: _Optional[_Union[MessageListReplacement, _Mapping]] = ...) -> None: ...

class ErrorOutcome(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: str
    def __init__(self, message: _Optional[str] = ...) -> None: ...

class StreamOutcomes(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[ChunkOutcome]
    def __init__(self, chunks: _Optional[_Iterable[_Union[ChunkOutcome, _Mapping]]] = ...) -> None: ...

class ChunkOutcome(_message.Message):
    __slots__ = ("unchanged", "replace", "drop", "abort", "error", "chunks")
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    unchanged: UnchangedOutcome
    replace: _chunk_pb2.Chunk
    drop: DropOutcome
    abort: AbortOutcome
    error: ErrorOutcome
    chunks: ChunkSequence
    def __init__(self, unchanged: _Optional[_Union[UnchangedOutcome, _Mapping]] = ..., replace: _Optional[_Union[_chunk_pb2.Chunk, _Mapping]] = ..., drop: _Optional[_Union[DropOutcome, _Mapping]] = ..., abort: _Optional[_Union[AbortOutcome, _Mapping]] = ..., error: _Optional[_Union[ErrorOutcome, _Mapping]] = ..., chunks: _Optional[_Union[ChunkSequence, _Mapping]] = ...) -> None: ...

class ChunkSequence(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...

class DropOutcome(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ResolveAgentArgs(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: _agent_pb2.Agent
    def __init__(self, agent: _Optional[_Union[_agent_pb2.Agent, _Mapping]] = ...) -> None: ...

class AgentOverrides(_message.Message):
    __slots__ = ("model", "instructions", "tools", "input_processors", "output_processors", "error_processors", "default_options")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    INPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    model: str
    instructions: _agent_pb2.SystemMessages
    tools: _agent_pb2.ToolNames
    input_processors: _agent_pb2.ProcessorList
    output_processors: _agent_pb2.ProcessorList
    error_processors: _agent_pb2.ProcessorList
    default_options: _agent_pb2.CallOptions
    def __init__(self, model: _Optional[str] = ..., instructions: _Optional[_Union[_agent_pb2.SystemMessages, _Mapping]] = ..., tools: _Optional[_Union[_agent_pb2.ToolNames, _Mapping]] = ..., input_processors: _Optional[_Union[_agent_pb2.ProcessorList, _Mapping]] = ..., output_processors: _Optional[_Union[_agent_pb2.ProcessorList, _Mapping]] = ..., error_processors: _Optional[_Union[_agent_pb2.ProcessorList, _Mapping]] = ..., default_options: _Optional[_Union[_agent_pb2.CallOptions, _Mapping]] = ...) -> None: ...
