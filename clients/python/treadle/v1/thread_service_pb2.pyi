import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import chunk_pb2 as _chunk_pb2
from treadle.v1 import message_pb2 as _message_pb2
from treadle.v1 import signal_pb2 as _signal_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RunStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RUN_STATUS_UNSPECIFIED: _ClassVar[RunStatus]
    RUN_STATUS_RUNNING: _ClassVar[RunStatus]
    RUN_STATUS_FINISHED: _ClassVar[RunStatus]
    RUN_STATUS_FAILED: _ClassVar[RunStatus]
    RUN_STATUS_ABORTED: _ClassVar[RunStatus]
RUN_STATUS_UNSPECIFIED: RunStatus
RUN_STATUS_RUNNING: RunStatus
RUN_STATUS_FINISHED: RunStatus
RUN_STATUS_FAILED: RunStatus
RUN_STATUS_ABORTED: RunStatus

class Thread(_message.Message):
    __slots__ = ("id", "resource_id", "title", "metadata", "create_time", "update_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    resource_id: str
    title: str
    metadata: _struct_pb2.Struct
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., resource_id: _Optional[str] = ..., title: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Run(_message.Message):
    __slots__ = ("id", "agent_id", "thread_id", "resource_id", "status", "finish_reason", "usage", "start_time", "end_time", "steps", "hooks", "agent_version_id", "agent_version_number", "agent_version_selection", "resolved_model", "matched_variants", "resolver_overrides", "parent_run_id", "parent_tool_call_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    HOOKS_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_NUMBER_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_SELECTION_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_MODEL_FIELD_NUMBER: _ClassVar[int]
    MATCHED_VARIANTS_FIELD_NUMBER: _ClassVar[int]
    RESOLVER_OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    PARENT_TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    agent_id: str
    thread_id: str
    resource_id: str
    status: RunStatus
    finish_reason: _chunk_pb2.FinishReason
    usage: _chunk_pb2.Usage
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    steps: _containers.RepeatedCompositeFieldContainer[RunStep]
    hooks: _containers.RepeatedCompositeFieldContainer[RunHookStats]
    agent_version_id: str
    agent_version_number: int
    agent_version_selection: str
    resolved_model: str
    matched_variants: _containers.RepeatedCompositeFieldContainer[MatchedVariant]
    resolver_overrides: _containers.RepeatedScalarFieldContainer[str]
    parent_run_id: str
    parent_tool_call_id: str
    def __init__(self, id: _Optional[str] = ..., agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., status: _Optional[_Union[RunStatus, str]] = ..., finish_reason: _Optional[_Union[_chunk_pb2.FinishReason, str]] = ..., usage: _Optional[_Union[_chunk_pb2.Usage, _Mapping]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[RunStep, _Mapping]]] = ..., hooks: _Optional[_Iterable[_Union[RunHookStats, _Mapping]]] = ..., agent_version_id: _Optional[str] = ..., agent_version_number: _Optional[int] = ..., agent_version_selection: _Optional[str] = ..., resolved_model: _Optional[str] = ..., matched_variants: _Optional[_Iterable[_Union[MatchedVariant, _Mapping]]] = ..., resolver_overrides: _Optional[_Iterable[str]] = ..., parent_run_id: _Optional[str] = ..., parent_tool_call_id: _Optional[str] = ...) -> None: ...

class MatchedVariant(_message.Message):
    __slots__ = ("field", "index")
    FIELD_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    field: str
    index: int
    def __init__(self, field: _Optional[str] = ..., index: _Optional[int] = ...) -> None: ...

class RunStep(_message.Message):
    __slots__ = ("number", "start_time", "end_time", "finish_reason", "usage", "model")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    number: int
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    finish_reason: str
    usage: _chunk_pb2.Usage
    model: str
    def __init__(self, number: _Optional[int] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., finish_reason: _Optional[str] = ..., usage: _Optional[_Union[_chunk_pb2.Usage, _Mapping]] = ..., model: _Optional[str] = ...) -> None: ...

class RunHookStats(_message.Message):
    __slots__ = ("step", "processor_id", "hook", "count", "total_duration", "outcomes")
    class OutcomesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    STEP_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    HOOK_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DURATION_FIELD_NUMBER: _ClassVar[int]
    OUTCOMES_FIELD_NUMBER: _ClassVar[int]
    step: int
    processor_id: str
    hook: str
    count: int
    total_duration: _duration_pb2.Duration
    outcomes: _containers.ScalarMap[str, int]
    def __init__(self, step: _Optional[int] = ..., processor_id: _Optional[str] = ..., hook: _Optional[str] = ..., count: _Optional[int] = ..., total_duration: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., outcomes: _Optional[_Mapping[str, int]] = ...) -> None: ...

class CreateThreadRequest(_message.Message):
    __slots__ = ("thread", "request_id")
    THREAD_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    request_id: str
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class CreateThreadResponse(_message.Message):
    __slots__ = ("thread",)
    THREAD_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ...) -> None: ...

class GetThreadRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ...) -> None: ...

class GetThreadResponse(_message.Message):
    __slots__ = ("thread",)
    THREAD_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ...) -> None: ...

class ListThreadsRequest(_message.Message):
    __slots__ = ("resource_id", "page_size", "page_token")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    page_size: int
    page_token: str
    def __init__(self, resource_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListThreadsResponse(_message.Message):
    __slots__ = ("threads", "next_page_token")
    THREADS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    threads: _containers.RepeatedCompositeFieldContainer[Thread]
    next_page_token: str
    def __init__(self, threads: _Optional[_Iterable[_Union[Thread, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateThreadRequest(_message.Message):
    __slots__ = ("resource_id", "thread", "update_mask", "request_id")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread: Thread
    update_mask: _field_mask_pb2.FieldMask
    request_id: str
    def __init__(self, resource_id: _Optional[str] = ..., thread: _Optional[_Union[Thread, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class UpdateThreadResponse(_message.Message):
    __slots__ = ("thread",)
    THREAD_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ...) -> None: ...

class DeleteThreadRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id", "request_id")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    request_id: str
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class DeleteThreadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id", "page_size", "page_token")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    page_size: int
    page_token: str
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ListRunsRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id", "page_size", "page_token")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    page_size: int
    page_token: str
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListRunsResponse(_message.Message):
    __slots__ = ("runs", "next_page_token")
    RUNS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    runs: _containers.RepeatedCompositeFieldContainer[Run]
    next_page_token: str
    def __init__(self, runs: _Optional[_Iterable[_Union[Run, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
