import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import fail_open_pb2 as _fail_open_pb2
from treadle.v1 import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChunkFrom(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHUNK_FROM_UNSPECIFIED: _ClassVar[ChunkFrom]
    CHUNK_FROM_AGENT: _ClassVar[ChunkFrom]
    CHUNK_FROM_USER: _ClassVar[ChunkFrom]
    CHUNK_FROM_SYSTEM: _ClassVar[ChunkFrom]
    CHUNK_FROM_WORKFLOW: _ClassVar[ChunkFrom]

class FinishReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FINISH_REASON_UNSPECIFIED: _ClassVar[FinishReason]
    FINISH_REASON_STOP: _ClassVar[FinishReason]
    FINISH_REASON_LENGTH: _ClassVar[FinishReason]
    FINISH_REASON_CONTENT_FILTER: _ClassVar[FinishReason]
    FINISH_REASON_TOOL_CALLS: _ClassVar[FinishReason]
    FINISH_REASON_ERROR: _ClassVar[FinishReason]
    FINISH_REASON_OTHER: _ClassVar[FinishReason]
    FINISH_REASON_UNKNOWN: _ClassVar[FinishReason]
    FINISH_REASON_TRIPWIRE: _ClassVar[FinishReason]
    FINISH_REASON_RETRY: _ClassVar[FinishReason]
CHUNK_FROM_UNSPECIFIED: ChunkFrom
CHUNK_FROM_AGENT: ChunkFrom
CHUNK_FROM_USER: ChunkFrom
CHUNK_FROM_SYSTEM: ChunkFrom
CHUNK_FROM_WORKFLOW: ChunkFrom
FINISH_REASON_UNSPECIFIED: FinishReason
FINISH_REASON_STOP: FinishReason
FINISH_REASON_LENGTH: FinishReason
FINISH_REASON_CONTENT_FILTER: FinishReason
FINISH_REASON_TOOL_CALLS: FinishReason
FINISH_REASON_ERROR: FinishReason
FINISH_REASON_OTHER: FinishReason
FINISH_REASON_UNKNOWN: FinishReason
FINISH_REASON_TRIPWIRE: FinishReason
FINISH_REASON_RETRY: FinishReason

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens", "cached_input_tokens")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASONING_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHED_INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    total_tokens: int
    reasoning_tokens: int
    cached_input_tokens: int
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., total_tokens: _Optional[int] = ..., reasoning_tokens: _Optional[int] = ..., cached_input_tokens: _Optional[int] = ...) -> None: ...

class ToolCall(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "args")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    args: _struct_pb2.Value
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class ToolResult(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "args", "result", "is_error")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    args: _struct_pb2.Value
    result: _struct_pb2.Value
    is_error: bool
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., is_error: _Optional[bool] = ...) -> None: ...

class Tripwire(_message.Message):
    __slots__ = ("reason", "retry", "metadata", "processor_id")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    reason: str
    retry: bool
    metadata: _struct_pb2.Value
    processor_id: str
    def __init__(self, reason: _Optional[str] = ..., retry: _Optional[bool] = ..., metadata: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., processor_id: _Optional[str] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("run_id", "metadata", "start", "step_start", "text_start", "text_delta", "text_end", "reasoning_start", "reasoning_delta", "reasoning_end", "tool_call_input_streaming_start", "tool_call_delta", "tool_call_input_streaming_end", "tool_call", "tool_result", "tool_error", "source", "file", "response_metadata", "step_finish", "finish", "error", "abort", "tripwire", "data", "tool_output")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    STEP_START_FIELD_NUMBER: _ClassVar[int]
    TEXT_START_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    TEXT_END_FIELD_NUMBER: _ClassVar[int]
    REASONING_START_FIELD_NUMBER: _ClassVar[int]
    REASONING_DELTA_FIELD_NUMBER: _ClassVar[int]
    REASONING_END_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_INPUT_STREAMING_START_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_INPUT_STREAMING_END_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    TOOL_ERROR_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_METADATA_FIELD_NUMBER: _ClassVar[int]
    STEP_FINISH_FIELD_NUMBER: _ClassVar[int]
    FINISH_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    TOOL_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    metadata: _struct_pb2.Struct
    start: StartChunk
    step_start: StepStartChunk
    text_start: TextStartChunk
    text_delta: TextDeltaChunk
    text_end: TextEndChunk
    reasoning_start: ReasoningStartChunk
    reasoning_delta: ReasoningDeltaChunk
    reasoning_end: ReasoningEndChunk
    tool_call_input_streaming_start: ToolCallInputStreamingStartChunk
    tool_call_delta: ToolCallDeltaChunk
    tool_call_input_streaming_end: ToolCallInputStreamingEndChunk
    tool_call: ToolCallChunk
    tool_result: ToolResultChunk
    tool_error: ToolErrorChunk
    source: SourceChunk
    file: FileChunk
    response_metadata: ResponseMetadataChunk
    step_finish: StepFinishChunk
    finish: FinishChunk
    error: ErrorChunk
    abort: AbortChunk
    tripwire: TripwireChunk
    data: DataChunk
    tool_output: ToolOutputChunk
    def __init__(self, run_id: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., start: _Optional[_Union[StartChunk, _Mapping]] = ..., step_start: _Optional[_Union[StepStartChunk, _Mapping]] = ..., text_start: _Optional[_Union[TextStartChunk, _Mapping]] = ..., text_delta: _Optional[_Union[TextDeltaChunk, _Mapping]] = ..., text_end: _Optional[_Union[TextEndChunk, _Mapping]] = ..., reasoning_start: _Optional[_Union[ReasoningStartChunk, _Mapping]] = ..., reasoning_delta: _Optional[_Union[ReasoningDeltaChunk, _Mapping]] = ..., reasoning_end: _Optional[_Union[ReasoningEndChunk, _Mapping]] = ..., tool_call_input_streaming_start: _Optional[_Union[ToolCallInputStreamingStartChunk, _Mapping]] = ..., tool_call_delta: _Optional[_Union[ToolCallDeltaChunk, _Mapping]] = ..., tool_call_input_streaming_end: _Optional[_Union[ToolCallInputStreamingEndChunk, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCallChunk, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultChunk, _Mapping]] = ..., tool_error: _Optional[_Union[ToolErrorChunk, _Mapping]] = ..., source: _Optional[_Union[SourceChunk, _Mapping]] = ..., file: _Optional[_Union[FileChunk, _Mapping]] = ..., response_metadata: _Optional[_Union[ResponseMetadataChunk, _Mapping]] = ..., step_finish: _Optional[_Union[StepFinishChunk, _Mapping]] = ..., finish: _Optional[_Union[FinishChunk, _Mapping]] = ..., error: _Optional[_Union[ErrorChunk, _Mapping]] = ..., abort: _Optional[_Union[AbortChunk, _Mapping]] = ..., tripwire: _Optional[_Union[TripwireChunk, _Mapping]] = ..., data: _Optional[_Union[DataChunk, _Mapping]] = ..., tool_output: _Optional[_Union[ToolOutputChunk, _Mapping]] = ..., **kwargs) -> None: ...

class StartChunk(_message.Message):
    __slots__ = ("agent_id", "message_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    message_id: str
    def __init__(self, agent_id: _Optional[str] = ..., message_id: _Optional[str] = ...) -> None: ...

class StepStartChunk(_message.Message):
    __slots__ = ("message_id", "step_number", "model_id")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    step_number: int
    model_id: str
    def __init__(self, message_id: _Optional[str] = ..., step_number: _Optional[int] = ..., model_id: _Optional[str] = ...) -> None: ...

class TextStartChunk(_message.Message):
    __slots__ = ("id", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TextDeltaChunk(_message.Message):
    __slots__ = ("id", "text", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TextEndChunk(_message.Message):
    __slots__ = ("id", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReasoningStartChunk(_message.Message):
    __slots__ = ("id", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReasoningDeltaChunk(_message.Message):
    __slots__ = ("id", "text", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReasoningEndChunk(_message.Message):
    __slots__ = ("id", "signature", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    signature: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., signature: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ToolCallInputStreamingStartChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "provider_executed")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    provider_executed: bool
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., provider_executed: _Optional[bool] = ...) -> None: ...

class ToolCallDeltaChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "args_text_delta")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    args_text_delta: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args_text_delta: _Optional[str] = ...) -> None: ...

class ToolCallInputStreamingEndChunk(_message.Message):
    __slots__ = ("tool_call_id",)
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    def __init__(self, tool_call_id: _Optional[str] = ...) -> None: ...

class ToolCallChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "args", "provider_executed")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    args: _struct_pb2.Value
    provider_executed: bool
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., provider_executed: _Optional[bool] = ...) -> None: ...

class ToolResultChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "result", "is_error", "args", "provider_executed")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    result: _struct_pb2.Value
    is_error: bool
    args: _struct_pb2.Value
    provider_executed: bool
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., is_error: _Optional[bool] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., provider_executed: _Optional[bool] = ...) -> None: ...

class ToolErrorChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "error", "args")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    error: str
    args: _struct_pb2.Value
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., error: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class SourceChunk(_message.Message):
    __slots__ = ("id", "source_type", "title", "url", "mime_type", "filename")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    id: str
    source_type: _message_pb2.SourceType
    title: str
    url: str
    mime_type: str
    filename: str
    def __init__(self, id: _Optional[str] = ..., source_type: _Optional[_Union[_message_pb2.SourceType, str]] = ..., title: _Optional[str] = ..., url: _Optional[str] = ..., mime_type: _Optional[str] = ..., filename: _Optional[str] = ...) -> None: ...

class FileChunk(_message.Message):
    __slots__ = ("data", "mime_type", "filename")
    DATA_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    mime_type: str
    filename: str
    def __init__(self, data: _Optional[bytes] = ..., mime_type: _Optional[str] = ..., filename: _Optional[str] = ...) -> None: ...

class ResponseMetadataChunk(_message.Message):
    __slots__ = ("id", "model_id", "timestamp")
    ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    id: str
    model_id: str
    timestamp: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., model_id: _Optional[str] = ..., timestamp: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class StepFinishChunk(_message.Message):
    __slots__ = ("message_id", "step_number", "reason", "raw_reason", "usage", "text", "tool_calls", "is_continued")
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RAW_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    IS_CONTINUED_FIELD_NUMBER: _ClassVar[int]
    message_id: str
    step_number: int
    reason: FinishReason
    raw_reason: str
    usage: Usage
    text: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    is_continued: bool
    def __init__(self, message_id: _Optional[str] = ..., step_number: _Optional[int] = ..., reason: _Optional[_Union[FinishReason, str]] = ..., raw_reason: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., text: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., is_continued: _Optional[bool] = ...) -> None: ...

class FinishChunk(_message.Message):
    __slots__ = ("reason", "total_usage", "skipped_processors")
    REASON_FIELD_NUMBER: _ClassVar[int]
    TOTAL_USAGE_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    reason: FinishReason
    total_usage: Usage
    skipped_processors: _containers.RepeatedCompositeFieldContainer[_fail_open_pb2.SkippedProcessor]
    def __init__(self, reason: _Optional[_Union[FinishReason, str]] = ..., total_usage: _Optional[_Union[Usage, _Mapping]] = ..., skipped_processors: _Optional[_Iterable[_Union[_fail_open_pb2.SkippedProcessor, _Mapping]]] = ...) -> None: ...

class ErrorChunk(_message.Message):
    __slots__ = ("name", "message", "details")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    name: str
    message: str
    details: _struct_pb2.Value
    def __init__(self, name: _Optional[str] = ..., message: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class AbortChunk(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class TripwireChunk(_message.Message):
    __slots__ = ("reason", "retry", "metadata", "processor_id")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    reason: str
    retry: bool
    metadata: _struct_pb2.Value
    processor_id: str
    def __init__(self, reason: _Optional[str] = ..., retry: _Optional[bool] = ..., metadata: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., processor_id: _Optional[str] = ...) -> None: ...

class DataChunk(_message.Message):
    __slots__ = ("name", "data", "transient", "id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    TRANSIENT_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    data: _struct_pb2.Value
    transient: bool
    id: str
    def __init__(self, name: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., transient: _Optional[bool] = ..., id: _Optional[str] = ...) -> None: ...

class ToolOutputChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "output", "path")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    output: Chunk
    path: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., output: _Optional[_Union[Chunk, _Mapping]] = ..., path: _Optional[_Iterable[str]] = ...) -> None: ...

class StepResult(_message.Message):
    __slots__ = ("step_number", "text", "reasoning_text", "tool_calls", "tool_results", "finish_reason", "usage", "tripwire", "model_id")
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASONING_TEXT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULTS_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    step_number: int
    text: str
    reasoning_text: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_results: _containers.RepeatedCompositeFieldContainer[ToolResult]
    finish_reason: FinishReason
    usage: Usage
    tripwire: Tripwire
    model_id: str
    def __init__(self, step_number: _Optional[int] = ..., text: _Optional[str] = ..., reasoning_text: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_results: _Optional[_Iterable[_Union[ToolResult, _Mapping]]] = ..., finish_reason: _Optional[_Union[FinishReason, str]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., tripwire: _Optional[_Union[Tripwire, _Mapping]] = ..., model_id: _Optional[str] = ...) -> None: ...
