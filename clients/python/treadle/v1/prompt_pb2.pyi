from google.protobuf import struct_pb2 as _struct_pb2
from treadle.v1 import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PromptRole(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROMPT_ROLE_UNSPECIFIED: _ClassVar[PromptRole]
    PROMPT_ROLE_SYSTEM: _ClassVar[PromptRole]
    PROMPT_ROLE_USER: _ClassVar[PromptRole]
    PROMPT_ROLE_ASSISTANT: _ClassVar[PromptRole]
    PROMPT_ROLE_TOOL: _ClassVar[PromptRole]
PROMPT_ROLE_UNSPECIFIED: PromptRole
PROMPT_ROLE_SYSTEM: PromptRole
PROMPT_ROLE_USER: PromptRole
PROMPT_ROLE_ASSISTANT: PromptRole
PROMPT_ROLE_TOOL: PromptRole

class PromptMessage(_message.Message):
    __slots__ = ("role", "content", "provider_options")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    role: PromptRole
    content: _containers.RepeatedCompositeFieldContainer[PromptPart]
    provider_options: _struct_pb2.Struct
    def __init__(self, role: _Optional[_Union[PromptRole, str]] = ..., content: _Optional[_Iterable[_Union[PromptPart, _Mapping]]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class PromptPart(_message.Message):
    __slots__ = ("text", "reasoning", "file", "tool_call", "tool_result")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASONING_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    text: _message_pb2.TextPart
    reasoning: _message_pb2.ReasoningPart
    file: _message_pb2.FilePart
    tool_call: ToolCallPart
    tool_result: ToolResultPart
    def __init__(self, text: _Optional[_Union[_message_pb2.TextPart, _Mapping]] = ..., reasoning: _Optional[_Union[_message_pb2.ReasoningPart, _Mapping]] = ..., file: _Optional[_Union[_message_pb2.FilePart, _Mapping]] = ..., tool_call: _Optional[_Union[ToolCallPart, _Mapping]] = ..., tool_result: _Optional[_Union[ToolResultPart, _Mapping]] = ...) -> None: ...

class ToolCallPart(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "args")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    args: _struct_pb2.Value
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class ToolResultPart(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "result", "is_error")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    result: _struct_pb2.Value
    is_error: bool
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., is_error: _Optional[bool] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ("name", "description", "input_schema", "output_schema")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: _struct_pb2.Struct
    output_schema: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., output_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...
