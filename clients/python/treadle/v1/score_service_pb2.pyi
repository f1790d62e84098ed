import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import message_pb2 as _message_pb2
from treadle.v1 import remote_pb2 as _remote_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScoreSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORE_SOURCE_UNSPECIFIED: _ClassVar[ScoreSource]
    SCORE_SOURCE_LIVE: _ClassVar[ScoreSource]
    SCORE_SOURCE_TEST: _ClassVar[ScoreSource]
SCORE_SOURCE_UNSPECIFIED: ScoreSource
SCORE_SOURCE_LIVE: ScoreSource
SCORE_SOURCE_TEST: ScoreSource

class ScorerInput(_message.Message):
    __slots__ = ("input_messages", "remembered_messages", "system_messages")
    INPUT_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    REMEMBERED_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    input_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    remembered_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.SystemMessage]
    def __init__(self, input_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., remembered_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., system_messages: _Optional[_Iterable[_Union[_message_pb2.SystemMessage, _Mapping]]] = ...) -> None: ...

class Score(_message.Message):
    __slots__ = ("id", "run_id", "scorer_id", "agent_id", "score", "reason", "details", "input", "output", "trace_id", "span_id", "thread_id", "resource_id", "source", "create_time", "agent_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SCORER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    SPAN_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    run_id: str
    scorer_id: str
    agent_id: str
    score: float
    reason: str
    details: _struct_pb2.Struct
    input: ScorerInput
    output: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    trace_id: str
    span_id: str
    thread_id: str
    resource_id: str
    source: ScoreSource
    create_time: _timestamp_pb2.Timestamp
    agent_version: str
    def __init__(self, id: _Optional[str] = ..., run_id: _Optional[str] = ..., scorer_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., score: _Optional[float] = ..., reason: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., input: _Optional[_Union[ScorerInput, _Mapping]] = ..., output: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., trace_id: _Optional[str] = ..., span_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., source: _Optional[_Union[ScoreSource, str]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., agent_version: _Optional[str] = ...) -> None: ...

class ListScoresRequest(_message.Message):
    __slots__ = ("agent_id", "scorer_id", "run_id", "thread_id", "start_time", "end_time", "source", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCORER_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scorer_id: str
    run_id: str
    thread_id: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    source: ScoreSource
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., scorer_id: _Optional[str] = ..., run_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source: _Optional[_Union[ScoreSource, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListScoresResponse(_message.Message):
    __slots__ = ("scores", "next_page_token")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[Score]
    next_page_token: str
    def __init__(self, scores: _Optional[_Iterable[_Union[Score, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class AggregateScoresRequest(_message.Message):
    __slots__ = ("agent_id", "scorer_id", "start_time", "end_time", "source", "buckets")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCORER_ID_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    BUCKETS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scorer_id: str
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    source: ScoreSource
    buckets: int
    def __init__(self, agent_id: _Optional[str] = ..., scorer_id: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., source: _Optional[_Union[ScoreSource, str]] = ..., buckets: _Optional[int] = ...) -> None: ...

class ScoreAggregate(_message.Message):
    __slots__ = ("agent_id", "scorer_id", "agent_version", "count", "mean", "distribution", "min", "max")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCORER_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MEAN_FIELD_NUMBER: _ClassVar[int]
    DISTRIBUTION_FIELD_NUMBER: _ClassVar[int]
    MIN_FIELD_NUMBER: _ClassVar[int]
    MAX_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scorer_id: str
    agent_version: str
    count: int
    mean: float
    distribution: _containers.RepeatedScalarFieldContainer[int]
    min: float
    max: float
    def __init__(self, agent_id: _Optional[str] = ..., scorer_id: _Optional[str] = ..., agent_version: _Optional[str] = ..., count: _Optional[int] = ..., mean: _Optional[float] = ..., distribution: _Optional[_Iterable[int]] = ..., min: _Optional[float] = ..., max: _Optional[float] = ...) -> None: ...

class AggregateScoresResponse(_message.Message):
    __slots__ = ("aggregates",)
    AGGREGATES_FIELD_NUMBER: _ClassVar[int]
    aggregates: _containers.RepeatedCompositeFieldContainer[ScoreAggregate]
    def __init__(self, aggregates: _Optional[_Iterable[_Union[ScoreAggregate, _Mapping]]] = ...) -> None: ...

class ScoreRunRequest(_message.Message):
    __slots__ = ("run_id", "scorer_ids", "agent_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SCORER_IDS_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    scorer_ids: _containers.RepeatedScalarFieldContainer[str]
    agent_id: str
    def __init__(self, run_id: _Optional[str] = ..., scorer_ids: _Optional[_Iterable[str]] = ..., agent_id: _Optional[str] = ...) -> None: ...

class ScoreRunResponse(_message.Message):
    __slots__ = ("scores",)
    SCORES_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[Score]
    def __init__(self, scores: _Optional[_Iterable[_Union[Score, _Mapping]]] = ...) -> None: ...

class ScorerServiceAttachRequest(_message.Message):
    __slots__ = ("handshake", "result")
    HANDSHAKE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    handshake: ScorerHandshake
    result: ScoreInvocationResult
    def __init__(self, handshake: _Optional[_Union[ScorerHandshake, _Mapping]] = ..., result: _Optional[_Union[ScoreInvocationResult, _Mapping]] = ...) -> None: ...

class ScorerServiceAttachResponse(_message.Message):
    __slots__ = ("welcome", "invocation", "cancel", "drain")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_FIELD_NUMBER: _ClassVar[int]
    CANCEL_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    welcome: ScorerWelcome
    invocation: ScoreInvocation
    cancel: _remote_pb2.CancelInvocation
    drain: _remote_pb2.Drain
    def __init__(self, welcome: _Optional[_Union[ScorerWelcome, _Mapping]] = ..., invocation: _Optional[_Union[ScoreInvocation, _Mapping]] = ..., cancel: _Optional[_Union[_remote_pb2.CancelInvocation, _Mapping]] = ..., drain: _Optional[_Union[_remote_pb2.Drain, _Mapping]] = ...) -> None: ...

class ScorerHandshake(_message.Message):
    __slots__ = ("protocol_versions", "scorers", "instance_id")
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    SCORERS_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    scorers: _containers.RepeatedCompositeFieldContainer[ScorerDeclaration]
    instance_id: str
    def __init__(self, protocol_versions: _Optional[_Iterable[int]] = ..., scorers: _Optional[_Iterable[_Union[ScorerDeclaration, _Mapping]]] = ..., instance_id: _Optional[str] = ...) -> None: ...

class ScorerDeclaration(_message.Message):
    __slots__ = ("id", "name", "description")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ...) -> None: ...

class ScorerWelcome(_message.Message):
    __slots__ = ("protocol_version", "scorers", "server_id")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    SCORERS_FIELD_NUMBER: _ClassVar[int]
    SERVER_ID_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    scorers: _containers.RepeatedCompositeFieldContainer[ScorerDeclaration]
    server_id: str
    def __init__(self, protocol_version: _Optional[int] = ..., scorers: _Optional[_Iterable[_Union[ScorerDeclaration, _Mapping]]] = ..., server_id: _Optional[str] = ...) -> None: ...

class ScoreInvocation(_message.Message):
    __slots__ = ("invocation_id", "scorer_id", "run_id", "agent_id", "thread_id", "resource_id", "request_context", "input", "output", "trace_context", "source", "agent_version")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    SCORER_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    INPUT_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TRACE_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    AGENT_VERSION_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    scorer_id: str
    run_id: str
    agent_id: str
    thread_id: str
    resource_id: str
    request_context: _struct_pb2.Struct
    input: ScorerInput
    output: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    trace_context: _remote_pb2.TraceContext
    source: ScoreSource
    agent_version: str
    def __init__(self, invocation_id: _Optional[str] = ..., scorer_id: _Optional[str] = ..., run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., input: _Optional[_Union[ScorerInput, _Mapping]] = ..., output: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., trace_context: _Optional[_Union[_remote_pb2.TraceContext, _Mapping]] = ..., source: _Optional[_Union[ScoreSource, str]] = ..., agent_version: _Optional[str] = ...) -> None: ...

class ScoreInvocationResult(_message.Message):
    __slots__ = ("invocation_id", "score", "reason", "details", "error")
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    invocation_id: str
    score: float
    reason: str
    details: _struct_pb2.Struct
    error: str
    def __init__(self, invocation_id: _Optional[str] = ..., score: _Optional[float] = ..., reason: _Optional[str] = ..., details: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...
