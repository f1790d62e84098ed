from google.protobuf import field_mask_pb2 as _field_mask_pb2
from treadle.v1 import agent_pb2 as _agent_pb2
from treadle.v1 import chunk_pb2 as _chunk_pb2
from treadle.v1 import fail_open_pb2 as _fail_open_pb2
from treadle.v1 import message_pb2 as _message_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateAgentRequest(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: _agent_pb2.Agent
    def __init__(self, agent: _Optional[_Union[_agent_pb2.Agent, _Mapping]] = ...) -> None: ...

class CreateAgentResponse(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: _agent_pb2.Agent
    def __init__(self, agent: _Optional[_Union[_agent_pb2.Agent, _Mapping]] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetAgentResponse(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: _agent_pb2.Agent
    def __init__(self, agent: _Optional[_Union[_agent_pb2.Agent, _Mapping]] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents", "next_page_token")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[_agent_pb2.Agent]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[_agent_pb2.Agent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateAgentRequest(_message.Message):
    __slots__ = ("agent", "update_mask")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    agent: _agent_pb2.Agent
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, agent: _Optional[_Union[_agent_pb2.Agent, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentResponse(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: _agent_pb2.Agent
    def __init__(self, agent: _Optional[_Union[_agent_pb2.Agent, _Mapping]] = ...) -> None: ...

class DeleteAgentRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class DeleteAgentResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GenerateRequest(_message.Message):
    __slots__ = ("agent_id", "prompt", "messages", "options", "run_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    prompt: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    options: _agent_pb2.CallOptions
    run_id: str
    def __init__(self, agent_id: _Optional[str] = ..., prompt: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., options: _Optional[_Union[_agent_pb2.CallOptions, _Mapping]] = ..., run_id: _Optional[str] = ...) -> None: ...

class GenerateResponse(_message.Message):
    __slots__ = ("run_id", "text", "finish_reason", "usage", "steps", "tripwire", "messages", "error", "skipped_processors")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    text: str
    finish_reason: _chunk_pb2.FinishReason
    usage: _chunk_pb2.Usage
    steps: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.StepResult]
    tripwire: _chunk_pb2.Tripwire
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    error: _chunk_pb2.ErrorChunk
    skipped_processors: _containers.RepeatedCompositeFieldContainer[_fail_open_pb2.SkippedProcessor]
    def __init__(self, run_id: _Optional[str] = ..., text: _Optional[str] = ..., finish_reason: _Optional[_Union[_chunk_pb2.FinishReason, str]] = ..., usage: _Optional[_Union[_chunk_pb2.Usage, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[_chunk_pb2.StepResult, _Mapping]]] = ..., tripwire: _Optional[_Union[_chunk_pb2.Tripwire, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., error: _Optional[_Union[_chunk_pb2.ErrorChunk, _Mapping]] = ..., skipped_processors: _Optional[_Iterable[_Union[_fail_open_pb2.SkippedProcessor, _Mapping]]] = ...) -> None: ...

class StreamRequest(_message.Message):
    __slots__ = ("agent_id", "prompt", "messages", "options", "run_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    prompt: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    options: _agent_pb2.CallOptions
    run_id: str
    def __init__(self, agent_id: _Optional[str] = ..., prompt: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., options: _Optional[_Union[_agent_pb2.CallOptions, _Mapping]] = ..., run_id: _Optional[str] = ...) -> None: ...

class StreamResponse(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...
