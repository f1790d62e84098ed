import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MessageRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MESSAGE_ROLE_UNSPECIFIED: _ClassVar[MessageRole]
    MESSAGE_ROLE_USER: _ClassVar[MessageRole]
    MESSAGE_ROLE_ASSISTANT: _ClassVar[MessageRole]
    MESSAGE_ROLE_SYSTEM: _ClassVar[MessageRole]
    MESSAGE_ROLE_SIGNAL: _ClassVar[MessageRole]

class SourceType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SOURCE_TYPE_UNSPECIFIED: _ClassVar[SourceType]
    SOURCE_TYPE_URL: _ClassVar[SourceType]
    SOURCE_TYPE_DOCUMENT: _ClassVar[SourceType]

class ToolInvocationState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_INVOCATION_STATE_UNSPECIFIED: _ClassVar[ToolInvocationState]
    TOOL_INVOCATION_STATE_PARTIAL_CALL: _ClassVar[ToolInvocationState]
    TOOL_INVOCATION_STATE_CALL: _ClassVar[ToolInvocationState]
    TOOL_INVOCATION_STATE_RESULT: _ClassVar[ToolInvocationState]
    TOOL_INVOCATION_STATE_OUTPUT_ERROR: _ClassVar[ToolInvocationState]
MESSAGE_ROLE_UNSPECIFIED: MessageRole
MESSAGE_ROLE_USER: MessageRole
MESSAGE_ROLE_ASSISTANT: MessageRole
MESSAGE_ROLE_SYSTEM: MessageRole
MESSAGE_ROLE_SIGNAL: MessageRole
SOURCE_TYPE_UNSPECIFIED: SourceType
SOURCE_TYPE_URL: SourceType
SOURCE_TYPE_DOCUMENT: SourceType
TOOL_INVOCATION_STATE_UNSPECIFIED: ToolInvocationState
TOOL_INVOCATION_STATE_PARTIAL_CALL: ToolInvocationState
TOOL_INVOCATION_STATE_CALL: ToolInvocationState
TOOL_INVOCATION_STATE_RESULT: ToolInvocationState
TOOL_INVOCATION_STATE_OUTPUT_ERROR: ToolInvocationState

class Message(_message.Message):
    __slots__ = ("id", "role", "created_at", "thread_id", "resource_id", "content", "type")
    ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    id: str
    role: MessageRole
    created_at: _timestamp_pb2.Timestamp
    thread_id: str
    resource_id: str
    content: MessageContent
    type: str
    def __init__(self, id: _Optional[str] = ..., role: _Optional[_Union[MessageRole, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., content: _Optional[_Union[MessageContent, _Mapping]] = ..., type: _Optional[str] = ...) -> None: ...

class MessageContent(_message.Message):
    __slots__ = ("format", "parts", "metadata")
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    format: int
    parts: _containers.RepeatedCompositeFieldContainer[Part]
    metadata: _struct_pb2.Struct
    def __init__(self, format: _Optional[int] = ..., parts: _Optional[_Iterable[_Union[Part, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Part(_message.Message):
    __slots__ = ("text", "reasoning", "file", "source", "step_start", "tool_invocation", "error", "data", "provider_metadata")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    STEP_START_FIELD_NUMBER: _ClassVar[int]
    TOOL_INVOCATION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    text: TextPart
    reasoning: ReasoningPart
    file: FilePart
    source: SourcePart
    step_start: StepStartPart
    tool_invocation: ToolInvocationPart
    error: ErrorPart
    data: DataPart
    provider_metadata: _struct_pb2.Struct
    def __init__(self, text: _Optional[_Union[TextPart, _Mapping]] = ..., reasoning: _Optional[_Union[ReasoningPart, _Mapping]] = ..., file: _Optional[_Union[FilePart, _Mapping]] = ..., source: _Optional[_Union[SourcePart, _Mapping]] = ..., step_start: _Optional[_Union[StepStartPart, _Mapping]] = ..., tool_invocation: _Optional[_Union[ToolInvocationPart, _Mapping]] = ..., error: _Optional[_Union[ErrorPart, _Mapping]] = ..., data: _Optional[_Union[DataPart, _Mapping]] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TextPart(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class ReasoningPart(_message.Message):
    __slots__ = ("text", "signature", "redacted_data")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    REDACTED_DATA_FIELD_NUMBER: _ClassVar[int]
    text: str
    signature: str
    redacted_data: bytes
    def __init__(self, text: _Optional[str] = ..., signature: _Optional[str] = ..., redacted_data: _Optional[bytes] = ...) -> None: ...

class FilePart(_message.Message):
    __slots__ = ("data", "url", "mime_type", "filename")
    DATA_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    url: str
    mime_type: str
    filename: str
    def __init__(self, data: _Optional[bytes] = ..., url: _Optional[str] = ..., mime_type: _Optional[str] = ..., filename: _Optional[str] = ...) -> None: ...

class SourcePart(_message.Message):
    __slots__ = ("source_type", "id", "url", "title", "mime_type", "filename")
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    source_type: SourceType
    id: str
    url: str
    title: str
    mime_type: str
    filename: str
    def __init__(self, source_type: _Optional[_Union[SourceType, str]] = ..., id: _Optional[str] = ..., url: _Optional[str] = ..., title: _Optional[str] = ..., mime_type: _Optional[str] = ..., filename: _Optional[str] = ...) -> None: ...

class StepStartPart(_message.Message):
    __slots__ = ("model",)
    MODEL_FIELD_NUMBER: _ClassVar[int]
    model: str
    def __init__(self, model: _Optional[str] = ...) -> None: ...

class ToolInvocationPart(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "args", "state", "result", "is_error", "error_text")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    ERROR_TEXT_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    args: _struct_pb2.Value
    state: ToolInvocationState
    result: _struct_pb2.Value
    is_error: bool
    error_text: str
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., state: _Optional[_Union[ToolInvocationState, str]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., is_error: _Optional[bool] = ..., error_text: _Optional[str] = ...) -> None: ...

class ErrorPart(_message.Message):
    __slots__ = ("name", "message")
    NAME_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    name: str
    message: str
    def __init__(self, name: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class DataPart(_message.Message):
    __slots__ = ("name", "data", "id")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    name: str
    data: _struct_pb2.Value
    id: str
    def __init__(self, name: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., id: _Optional[str] = ...) -> None: ...

class SystemMessage(_message.Message):
    __slots__ = ("content", "provider_options")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    content: str
    provider_options: _struct_pb2.Struct
    def __init__(self, content: _Optional[str] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
