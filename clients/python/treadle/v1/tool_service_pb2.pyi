import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import chunk_pb2 as _chunk_pb2
from treadle.v1 import prompt_pb2 as _prompt_pb2
from treadle.v1 import remote_pb2 as _remote_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ToolServiceAttachRequest(_message.Message):
    __slots__ = ("handshake", "result")
    HANDSHAKE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    handshake: ToolHandshake
    result: ToolCallResult
    def __init__(self, handshake: _Optional[_Union[ToolHandshake, _Mapping]] = ..., result: _Optional[_Union[ToolCallResult, _Mapping]] = ...) -> None: ...

class ToolServiceAttachResponse(_message.Message):
    __slots__ = ("welcome", "call", "cancel", "drain")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    welcome: ToolWelcome
    call: ToolInvocation
    cancel: _remote_pb2.CancelInvocation
    drain: _remote_pb2.Drain
    def __init__(self, welcome: _Optional[_Union[ToolWelcome, _Mapping]] = ..., call: _Optional[_Union[ToolInvocation, _Mapping]] = ..., cancel: _Optional[_Union[_remote_pb2.CancelInvocation, _Mapping]] = ..., drain: _Optional[_Union[_remote_pb2.Drain, _Mapping]] = ...) -> None: ...

class ToolHandshake(_message.Message):
    __slots__ = ("protocol_versions", "tools", "instance_id")
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    tools: _containers.RepeatedCompositeFieldContainer[_prompt_pb2.ToolDefinition]
    instance_id: str
    def __init__(self, protocol_versions: _Optional[_Iterable[int]] = ..., tools: _Optional[_Iterable[_Union[_prompt_pb2.ToolDefinition, _Mapping]]] = ..., instance_id: _Optional[str] = ...) -> None: ...

class ToolWelcome(_message.Message):
    __slots__ = ("protocol_version", "tools", "server_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    tools: _containers.RepeatedScalarFieldContainer[str]
    server_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., tools: _Optional[_Iterable[str]] = ..., server_id: _Optional[str] = ...) -> None: ...

class ToolInvocation(_message.Message):
    __slots__ = ("invocation_id", "tool_name", "tool_call_id", "args", "run_id", "agent_id", "thread_id", "resource_id", "request_context", "trace_context", "deadline")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    tool_name: str
    tool_call_id: str
    args: _struct_pb2.Value
    run_id: str
    agent_id: str
    thread_id: str
    resource_id: str
    request_context: _struct_pb2.Struct
    trace_context: _remote_pb2.TraceContext
    deadline: _timestamp_pb2.Timestamp
    def __init__(self, invocation_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., trace_context: _Optional[_Union[_remote_pb2.TraceContext, _Mapping]] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ToolCallResult(_message.Message):
    __slots__ = ("invocation_id", "output", "error", "custom_chunks")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    output: _struct_pb2.Value
    error: str
    custom_chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.DataChunk]
    def __init__(self, invocation_id: _Optional[str] = ..., output: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., error: _Optional[str] = ..., custom_chunks: _Optional[_Iterable[_Union[_chunk_pb2.DataChunk, _Mapping]]] = ...) -> None: ...
