import datetime

from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from treadle.v1 import agent_pb2 as _agent_pb2
from treadle.v1 import chunk_pb2 as _chunk_pb2
from treadle.v1 import message_pb2 as _message_pb2
from treadle.v1 import notification_pb2 as _notification_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ActiveBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTIVE_BEHAVIOR_UNSPECIFIED: _ClassVar[ActiveBehavior]
    ACTIVE_BEHAVIOR_DELIVER: _ClassVar[ActiveBehavior]
    ACTIVE_BEHAVIOR_PERSIST: _ClassVar[ActiveBehavior]
    ACTIVE_BEHAVIOR_DISCARD: _ClassVar[ActiveBehavior]

class IdleBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IDLE_BEHAVIOR_UNSPECIFIED: _ClassVar[IdleBehavior]
    IDLE_BEHAVIOR_WAKE: _ClassVar[IdleBehavior]
    IDLE_BEHAVIOR_PERSIST: _ClassVar[IdleBehavior]
    IDLE_BEHAVIOR_DISCARD: _ClassVar[IdleBehavior]

class SignalAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIGNAL_ACTION_UNSPECIFIED: _ClassVar[SignalAction]
    SIGNAL_ACTION_WAKE: _ClassVar[SignalAction]
    SIGNAL_ACTION_DELIVER: _ClassVar[SignalAction]
    SIGNAL_ACTION_PERSIST: _ClassVar[SignalAction]
    SIGNAL_ACTION_DISCARD: _ClassVar[SignalAction]

class StateMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATE_MODE_UNSPECIFIED: _ClassVar[StateMode]
    STATE_MODE_SNAPSHOT: _ClassVar[StateMode]
    STATE_MODE_DELTA: _ClassVar[StateMode]

class NotificationPriority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTIFICATION_PRIORITY_UNSPECIFIED: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_LOW: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_MEDIUM: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_HIGH: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_URGENT: _ClassVar[NotificationPriority]

class NotificationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTIFICATION_STATUS_UNSPECIFIED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_PENDING: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_DELIVERED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_SUMMARIZED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_DISCARDED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_FAILED: _ClassVar[NotificationStatus]
ACTIVE_BEHAVIOR_UNSPECIFIED: ActiveBehavior
ACTIVE_BEHAVIOR_DELIVER: ActiveBehavior
ACTIVE_BEHAVIOR_PERSIST: ActiveBehavior
ACTIVE_BEHAVIOR_DISCARD: ActiveBehavior
IDLE_BEHAVIOR_UNSPECIFIED: IdleBehavior
IDLE_BEHAVIOR_WAKE: IdleBehavior
IDLE_BEHAVIOR_PERSIST: IdleBehavior
IDLE_BEHAVIOR_DISCARD: IdleBehavior
SIGNAL_ACTION_UNSPECIFIED: SignalAction
SIGNAL_ACTION_WAKE: SignalAction
SIGNAL_ACTION_DELIVER: SignalAction
SIGNAL_ACTION_PERSIST: SignalAction
SIGNAL_ACTION_DISCARD: SignalAction
STATE_MODE_UNSPECIFIED: StateMode
STATE_MODE_SNAPSHOT: StateMode
STATE_MODE_DELTA: StateMode
NOTIFICATION_PRIORITY_UNSPECIFIED: NotificationPriority
NOTIFICATION_PRIORITY_LOW: NotificationPriority
NOTIFICATION_PRIORITY_MEDIUM: NotificationPriority
NOTIFICATION_PRIORITY_HIGH: NotificationPriority
NOTIFICATION_PRIORITY_URGENT: NotificationPriority
NOTIFICATION_STATUS_UNSPECIFIED: NotificationStatus
NOTIFICATION_STATUS_PENDING: NotificationStatus
NOTIFICATION_STATUS_DELIVERED: NotificationStatus
NOTIFICATION_STATUS_SUMMARIZED: NotificationStatus
NOTIFICATION_STATUS_DISCARDED: NotificationStatus
NOTIFICATION_STATUS_FAILED: NotificationStatus

class SignalAttribute(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: _struct_pb2.Value
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class SignalMessage(_message.Message):
    __slots__ = ("contents", "parts", "attributes", "metadata", "provider_options", "ordered_attributes")
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    contents: str
    parts: _containers.RepeatedCompositeFieldContainer[_message_pb2.Part]
    attributes: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    provider_options: _struct_pb2.Struct
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, contents: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[_message_pb2.Part, _Mapping]]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class Signal(_message.Message):
    __slots__ = ("type", "tag_name", "contents", "parts", "attributes", "metadata", "provider_options", "ordered_attributes")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TAG_NAME_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    type: str
    tag_name: str
    contents: str
    parts: _containers.RepeatedCompositeFieldContainer[_message_pb2.Part]
    attributes: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    provider_options: _struct_pb2.Struct
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, type: _Optional[str] = ..., tag_name: _Optional[str] = ..., contents: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[_message_pb2.Part, _Mapping]]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class IfActive(_message.Message):
    __slots__ = ("behavior", "attributes", "ordered_attributes")
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    behavior: ActiveBehavior
    attributes: _struct_pb2.Struct
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, behavior: _Optional[_Union[ActiveBehavior, str]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class IfIdle(_message.Message):
    __slots__ = ("behavior", "attributes", "stream_options", "ordered_attributes")
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    STREAM_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    behavior: IdleBehavior
    attributes: _struct_pb2.Struct
    stream_options: _agent_pb2.CallOptions
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, behavior: _Optional[_Union[IdleBehavior, str]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., stream_options: _Optional[_Union[_agent_pb2.CallOptions, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class SignalAccepted(_message.Message):
    __slots__ = ("action", "run_id")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    action: SignalAction
    run_id: str
    def __init__(self, action: _Optional[_Union[SignalAction, str]] = ..., run_id: _Optional[str] = ...) -> None: ...

class CreatedSignal(_message.Message):
    __slots__ = ("id", "type", "tag_name", "created_at", "attributes", "ordered_attributes")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TAG_NAME_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    tag_name: str
    created_at: _timestamp_pb2.Timestamp
    attributes: _struct_pb2.Struct
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., tag_name: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class SendMessageRequest(_message.Message):
    __slots__ = ("agent_id", "run_id", "resource_id", "thread_id", "message", "if_active", "if_idle", "request_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    run_id: str
    resource_id: str
    thread_id: str
    message: SignalMessage
    if_active: IfActive
    if_idle: IfIdle
    request_id: str
    def __init__(self, agent_id: _Optional[str] = ..., run_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., message: _Optional[_Union[SignalMessage, _Mapping]] = ..., if_active: _Optional[_Union[IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[IfIdle, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SendMessageResponse(_message.Message):
    __slots__ = ("accepted", "signal")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    accepted: SignalAccepted
    signal: CreatedSignal
    def __init__(self, accepted: _Optional[_Union[SignalAccepted, _Mapping]] = ..., signal: _Optional[_Union[CreatedSignal, _Mapping]] = ...) -> None: ...

class QueueMessageRequest(_message.Message):
    __slots__ = ("agent_id", "run_id", "resource_id", "thread_id", "message", "if_active", "if_idle", "request_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    run_id: str
    resource_id: str
    thread_id: str
    message: SignalMessage
    if_active: IfActive
    if_idle: IfIdle
    request_id: str
    def __init__(self, agent_id: _Optional[str] = ..., run_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., message: _Optional[_Union[SignalMessage, _Mapping]] = ..., if_active: _Optional[_Union[IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[IfIdle, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class QueueMessageResponse(_message.Message):
    __slots__ = ("accepted", "signal")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    accepted: SignalAccepted
    signal: CreatedSignal
    def __init__(self, accepted: _Optional[_Union[SignalAccepted, _Mapping]] = ..., signal: _Optional[_Union[CreatedSignal, _Mapping]] = ...) -> None: ...

class SendSignalRequest(_message.Message):
    __slots__ = ("agent_id", "run_id", "resource_id", "thread_id", "signal", "if_active", "if_idle", "request_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    run_id: str
    resource_id: str
    thread_id: str
    signal: Signal
    if_active: IfActive
    if_idle: IfIdle
    request_id: str
    def __init__(self, agent_id: _Optional[str] = ..., run_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., signal: _Optional[_Union[Signal, _Mapping]] = ..., if_active: _Optional[_Union[IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[IfIdle, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SendSignalResponse(_message.Message):
    __slots__ = ("accepted", "signal")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    accepted: SignalAccepted
    signal: CreatedSignal
    def __init__(self, accepted: _Optional[_Union[SignalAccepted, _Mapping]] = ..., signal: _Optional[_Union[CreatedSignal, _Mapping]] = ...) -> None: ...

class StateSignal(_message.Message):
    __slots__ = ("id", "cache_key", "mode", "value", "delta", "contents", "attributes", "metadata", "tag_name", "ordered_attributes")
    ID_FIELD_NUMBER: _ClassVar[int]
    CACHE_KEY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    CONTENTS_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    TAG_NAME_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    id: str
    cache_key: str
    mode: StateMode
    value: _struct_pb2.Value
    delta: _struct_pb2.Value
    contents: str
    attributes: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    tag_name: str
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, id: _Optional[str] = ..., cache_key: _Optional[str] = ..., mode: _Optional[_Union[StateMode, str]] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., delta: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., contents: _Optional[str] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tag_name: _Optional[str] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class SendStateSignalRequest(_message.Message):
    __slots__ = ("agent_id", "run_id", "resource_id", "thread_id", "state", "if_active", "if_idle", "request_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    run_id: str
    resource_id: str
    thread_id: str
    state: StateSignal
    if_active: IfActive
    if_idle: IfIdle
    request_id: str
    def __init__(self, agent_id: _Optional[str] = ..., run_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., state: _Optional[_Union[StateSignal, _Mapping]] = ..., if_active: _Optional[_Union[IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[IfIdle, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SendStateSignalResponse(_message.Message):
    __slots__ = ("accepted", "signal", "skipped", "reason", "version")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    accepted: SignalAccepted
    signal: CreatedSignal
    skipped: bool
    reason: str
    version: int
    def __init__(self, accepted: _Optional[_Union[SignalAccepted, _Mapping]] = ..., signal: _Optional[_Union[CreatedSignal, _Mapping]] = ..., skipped: _Optional[bool] = ..., reason: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class Notification(_message.Message):
    __slots__ = ("source", "kind", "summary", "priority", "payload", "dedupe_key", "coalesce_key", "attributes", "metadata", "ordered_attributes")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    DEDUPE_KEY_FIELD_NUMBER: _ClassVar[int]
    COALESCE_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    source: str
    kind: str
    summary: str
    priority: NotificationPriority
    payload: _struct_pb2.Value
    dedupe_key: str
    coalesce_key: str
    attributes: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, source: _Optional[str] = ..., kind: _Optional[str] = ..., summary: _Optional[str] = ..., priority: _Optional[_Union[NotificationPriority, str]] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., dedupe_key: _Optional[str] = ..., coalesce_key: _Optional[str] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class NotificationRecord(_message.Message):
    __slots__ = ("id", "resource_id", "thread_id", "source", "kind", "priority", "status", "summary", "payload", "dedupe_key", "coalesce_key", "coalesced_count", "deliver_at", "summary_at", "delivery_attempts", "delivered_signal_id", "summary_signal_id", "attributes", "metadata", "create_time", "update_time", "ordered_attributes")
    ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    DEDUPE_KEY_FIELD_NUMBER: _ClassVar[int]
    COALESCE_KEY_FIELD_NUMBER: _ClassVar[int]
    COALESCED_COUNT_FIELD_NUMBER: _ClassVar[int]
    DELIVER_AT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_AT_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    ORDERED_ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    id: str
    resource_id: str
    thread_id: str
    source: str
    kind: str
    priority: NotificationPriority
    status: NotificationStatus
    summary: str
    payload: _struct_pb2.Value
    dedupe_key: str
    coalesce_key: str
    coalesced_count: int
    deliver_at: _timestamp_pb2.Timestamp
    summary_at: _timestamp_pb2.Timestamp
    delivery_attempts: int
    delivered_signal_id: str
    summary_signal_id: str
    attributes: _struct_pb2.Struct
    metadata: _struct_pb2.Struct
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    ordered_attributes: _containers.RepeatedCompositeFieldContainer[SignalAttribute]
    def __init__(self, id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., source: _Optional[str] = ..., kind: _Optional[str] = ..., priority: _Optional[_Union[NotificationPriority, str]] = ..., status: _Optional[_Union[NotificationStatus, str]] = ..., summary: _Optional[str] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., dedupe_key: _Optional[str] = ..., coalesce_key: _Optional[str] = ..., coalesced_count: _Optional[int] = ..., deliver_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., summary_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delivery_attempts: _Optional[int] = ..., delivered_signal_id: _Optional[str] = ..., summary_signal_id: _Optional[str] = ..., attributes: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., ordered_attributes: _Optional[_Iterable[_Union[SignalAttribute, _Mapping]]] = ...) -> None: ...

class NotificationDecision(_message.Message):
    __slots__ = ("action", "deliver_at", "summary_at", "rule")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DELIVER_AT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_AT_FIELD_NUMBER: _ClassVar[int]
    RULE_FIELD_NUMBER: _ClassVar[int]
    action: _notification_pb2.NotificationAction
    deliver_at: _timestamp_pb2.Timestamp
    summary_at: _timestamp_pb2.Timestamp
    rule: str
    def __init__(self, action: _Optional[_Union[_notification_pb2.NotificationAction, str]] = ..., deliver_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., summary_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rule: _Optional[str] = ...) -> None: ...

class SendNotificationSignalRequest(_message.Message):
    __slots__ = ("agent_id", "resource_id", "thread_id", "notification", "if_idle", "request_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    resource_id: str
    thread_id: str
    notification: Notification
    if_idle: IfIdle
    request_id: str
    def __init__(self, agent_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., notification: _Optional[_Union[Notification, _Mapping]] = ..., if_idle: _Optional[_Union[IfIdle, _Mapping]] = ..., request_id: _Optional[str] = ...) -> None: ...

class SendNotificationSignalResponse(_message.Message):
    __slots__ = ("record", "decision", "run_id", "signal", "accepted")
    RECORD_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    record: NotificationRecord
    decision: NotificationDecision
    run_id: str
    signal: CreatedSignal
    accepted: SignalAccepted
    def __init__(self, record: _Optional[_Union[NotificationRecord, _Mapping]] = ..., decision: _Optional[_Union[NotificationDecision, _Mapping]] = ..., run_id: _Optional[str] = ..., signal: _Optional[_Union[CreatedSignal, _Mapping]] = ..., accepted: _Optional[_Union[SignalAccepted, _Mapping]] = ...) -> None: ...

class ListNotificationsRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id", "statuses")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    statuses: _containers.RepeatedScalarFieldContainer[NotificationStatus]
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[NotificationStatus, str]]] = ...) -> None: ...

class ListNotificationsResponse(_message.Message):
    __slots__ = ("notifications",)
    NOTIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    notifications: _containers.RepeatedCompositeFieldContainer[NotificationRecord]
    def __init__(self, notifications: _Optional[_Iterable[_Union[NotificationRecord, _Mapping]]] = ...) -> None: ...

class SubscribeToThreadRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id", "position")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    position: str
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., position: _Optional[str] = ...) -> None: ...

class ActiveRun(_message.Message):
    __slots__ = ("run_id", "agent_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    agent_id: str
    def __init__(self, run_id: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class SubscribeToThreadResponse(_message.Message):
    __slots__ = ("chunks", "active_run", "messages", "position")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_RUN_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    active_run: ActiveRun
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    position: str
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ..., active_run: _Optional[_Union[ActiveRun, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., position: _Optional[str] = ...) -> None: ...

class AbortRunRequest(_message.Message):
    __slots__ = ("run_id", "resource_id", "thread_id", "request_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    resource_id: str
    thread_id: str
    request_id: str
    def __init__(self, run_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., request_id: _Optional[str] = ...) -> None: ...

class AbortRunResponse(_message.Message):
    __slots__ = ("aborted", "run_id")
    ABORTED_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    aborted: bool
    run_id: str
    def __init__(self, aborted: _Optional[bool] = ..., run_id: _Optional[str] = ...) -> None: ...

class GetActiveRunRequest(_message.Message):
    __slots__ = ("resource_id", "thread_id")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    thread_id: str
    def __init__(self, resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ...) -> None: ...

class GetActiveRunResponse(_message.Message):
    __slots__ = ("active_run",)
    ACTIVE_RUN_FIELD_NUMBER: _ClassVar[int]
    active_run: ActiveRun
    def __init__(self, active_run: _Optional[_Union[ActiveRun, _Mapping]] = ...) -> None: ...
