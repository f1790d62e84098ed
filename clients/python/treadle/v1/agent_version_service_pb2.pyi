import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import agent_pb2 as _agent_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentVersionState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_VERSION_STATE_UNSPECIFIED: _ClassVar[AgentVersionState]
    AGENT_VERSION_STATE_DRAFT: _ClassVar[AgentVersionState]
    AGENT_VERSION_STATE_PUBLISHED: _ClassVar[AgentVersionState]
    AGENT_VERSION_STATE_ARCHIVED: _ClassVar[AgentVersionState]
AGENT_VERSION_STATE_UNSPECIFIED: AgentVersionState
AGENT_VERSION_STATE_DRAFT: AgentVersionState
AGENT_VERSION_STATE_PUBLISHED: AgentVersionState
AGENT_VERSION_STATE_ARCHIVED: AgentVersionState

class AgentOverride(_message.Message):
    __slots__ = ("instructions", "instruction_messages", "tools", "tool_descriptions")
    class ToolDescriptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_DESCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    instructions: str
    instruction_messages: _agent_pb2.SystemMessages
    tools: _agent_pb2.ToolNames
    tool_descriptions: _containers.ScalarMap[str, str]
    def __init__(self, instructions: _Optional[str] = ..., instruction_messages: _Optional[_Union[_agent_pb2.SystemMessages, _Mapping]] = ..., tools: _Optional[_Union[_agent_pb2.ToolNames, _Mapping]] = ..., tool_descriptions: _Optional[_Mapping[str, str]] = ...) -> None: ...

class AgentVersion(_message.Message):
    __slots__ = ("id", "agent_id", "number", "state", "override", "message", "author", "create_time", "publish_time", "restored_from", "definition")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    OVERRIDE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    AUTHOR_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    PUBLISH_TIME_FIELD_NUMBER: _ClassVar[int]
    RESTORED_FROM_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    number: int
    state: AgentVersionState
    override: AgentOverride
    message: str
    author: str
    create_time: _timestamp_pb2.Timestamp
    publish_time: _timestamp_pb2.Timestamp
    restored_from: str
    definition: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., number: _Optional[int] = ..., state: _Optional[_Union[AgentVersionState, str]] = ..., override: _Optional[_Union[AgentOverride, _Mapping]] = ..., message: _Optional[str] = ..., author: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., publish_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., restored_from: _Optional[str] = ..., definition: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class CreateAgentVersionRequest(_message.Message):
    __slots__ = ("agent_id", "change", "message", "publish")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    CHANGE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PUBLISH_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    change: AgentOverride
    message: str
    publish: bool
    def __init__(self, agent_id: _Optional[str] = ..., change: _Optional[_Union[AgentOverride, _Mapping]] = ..., message: _Optional[str] = ..., publish: _Optional[bool] = ...) -> None: ...

class CreateAgentVersionResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: AgentVersion
    def __init__(self, version: _Optional[_Union[AgentVersion, _Mapping]] = ...) -> None: ...

class GetAgentVersionRequest(_message.Message):
    __slots__ = ("agent_id", "version")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: str
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class GetAgentVersionResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: AgentVersion
    def __init__(self, version: _Optional[_Union[AgentVersion, _Mapping]] = ...) -> None: ...

class ListAgentVersionsRequest(_message.Message):
    __slots__ = ("agent_id", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[AgentVersion]
    next_page_token: str
    def __init__(self, versions: _Optional[_Iterable[_Union[AgentVersion, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class PublishAgentVersionRequest(_message.Message):
    __slots__ = ("agent_id", "version")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: str
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class PublishAgentVersionResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: AgentVersion
    def __init__(self, version: _Optional[_Union[AgentVersion, _Mapping]] = ...) -> None: ...

class RestoreAgentVersionRequest(_message.Message):
    __slots__ = ("agent_id", "version", "message", "publish")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    PUBLISH_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: str
    message: str
    publish: bool
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[str] = ..., message: _Optional[str] = ..., publish: _Optional[bool] = ...) -> None: ...

class RestoreAgentVersionResponse(_message.Message):
    __slots__ = ("version",)
    VERSION_FIELD_NUMBER: _ClassVar[int]
    version: AgentVersion
    def __init__(self, version: _Optional[_Union[AgentVersion, _Mapping]] = ...) -> None: ...

class DiffAgentVersionsRequest(_message.Message):
    __slots__ = ("agent_id", "from_version", "to_version")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    FROM_VERSION_FIELD_NUMBER: _ClassVar[int]
    TO_VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    from_version: str
    to_version: str
    def __init__(self, agent_id: _Optional[str] = ..., from_version: _Optional[str] = ..., to_version: _Optional[str] = ...) -> None: ...

class FieldChange(_message.Message):
    __slots__ = ("field", "before", "after")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    BEFORE_FIELD_NUMBER: _ClassVar[int]
    AFTER_FIELD_NUMBER: _ClassVar[int]
    field: str
    before: str
    after: str
    def __init__(self, field: _Optional[str] = ..., before: _Optional[str] = ..., after: _Optional[str] = ...) -> None: ...

class DiffAgentVersionsResponse(_message.Message):
    __slots__ = ("changes", "instructions_diff")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_DIFF_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[FieldChange]
    instructions_diff: str
    def __init__(self, changes: _Optional[_Iterable[_Union[FieldChange, _Mapping]]] = ..., instructions_diff: _Optional[str] = ...) -> None: ...
