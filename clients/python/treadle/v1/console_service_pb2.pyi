from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListSpansRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ConsoleSpan(_message.Message):
    __slots__ = ("trace_id", "span_id", "parent_span_id", "name", "start_unix_nano", "end_unix_nano", "attributes", "status", "status_message")
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    START_UNIX_NANO_FIELD_NUMBER: _ClassVar[int]
    END_UNIX_NANO_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STATUS_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    start_unix_nano: int
    end_unix_nano: int
    attributes: _struct_pb2.Struct
    status: str
    status_message: str
    def __init__(self, trace_id: _Optional[str] = ..., span_id: _Optional[str] = ..., parent_span_id: _Optional[str] = ..., name: _Optional[str] = ..., start_unix_nano: _Optional[int] = ..., end_unix_nano: _Optional[int] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., status: _Optional[str] = ..., status_message: _Optional[str] = ...) -> None: ...

class ListSpansResponse(_message.Message):
    __slots__ = ("spans",)
    SPANS_FIELD_NUMBER: _ClassVar[int]
    spans: _containers.RepeatedCompositeFieldContainer[ConsoleSpan]
    def __init__(self, spans: _Optional[_Iterable[_Union[ConsoleSpan, _Mapping]]] = ...) -> None: ...

class ListReplicasRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ProcessorReplica(_message.Message):
    __slots__ = ("processor_id", "instance_id", "health", "ejected_for_seconds", "ejections", "consecutive_failures", "pending", "hooks")
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    HEALTH_FIELD_NUMBER: _ClassVar[int]
    EJECTED_FOR_SECONDS_FIELD_NUMBER: _ClassVar[int]
    EJECTIONS_FIELD_NUMBER: _ClassVar[int]
    CONSECUTIVE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    HOOKS_FIELD_NUMBER: _ClassVar[int]
    processor_id: str
    instance_id: str
    health: str
    ejected_for_seconds: float
    ejections: int
    consecutive_failures: int
    pending: int
    hooks: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, processor_id: _Optional[str] = ..., instance_id: _Optional[str] = ..., health: _Optional[str] = ..., ejected_for_seconds: _Optional[float] = ..., ejections: _Optional[int] = ..., consecutive_failures: _Optional[int] = ..., pending: _Optional[int] = ..., hooks: _Optional[_Iterable[str]] = ...) -> None: ...

class HookLatency(_message.Message):
    __slots__ = ("processor_id", "hook", "count", "mean_ms", "max_ms", "timeouts", "errors")
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    HOOK_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MEAN_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_MS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    processor_id: str
    hook: str
    count: int
    mean_ms: float
    max_ms: float
    timeouts: int
    errors: int
    def __init__(self, processor_id: _Optional[str] = ..., hook: _Optional[str] = ..., count: _Optional[int] = ..., mean_ms: _Optional[float] = ..., max_ms: _Optional[float] = ..., timeouts: _Optional[int] = ..., errors: _Optional[int] = ...) -> None: ...

class ToolReplica(_message.Message):
    __slots__ = ("tool_name", "instance_id", "pending")
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    tool_name: str
    instance_id: str
    pending: int
    def __init__(self, tool_name: _Optional[str] = ..., instance_id: _Optional[str] = ..., pending: _Optional[int] = ...) -> None: ...

class ListReplicasResponse(_message.Message):
    __slots__ = ("processors", "hook_latency", "tools")
    PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    HOOK_LATENCY_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    processors: _containers.RepeatedCompositeFieldContainer[ProcessorReplica]
    hook_latency: _containers.RepeatedCompositeFieldContainer[HookLatency]
    tools: _containers.RepeatedCompositeFieldContainer[ToolReplica]
    def __init__(self, processors: _Optional[_Iterable[_Union[ProcessorReplica, _Mapping]]] = ..., hook_latency: _Optional[_Iterable[_Union[HookLatency, _Mapping]]] = ..., tools: _Optional[_Iterable[_Union[ToolReplica, _Mapping]]] = ...) -> None: ...
