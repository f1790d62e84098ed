import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class NotificationAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTIFICATION_ACTION_UNSPECIFIED: _ClassVar[NotificationAction]
    NOTIFICATION_ACTION_DELIVER: _ClassVar[NotificationAction]
    NOTIFICATION_ACTION_SUMMARIZE: _ClassVar[NotificationAction]
    NOTIFICATION_ACTION_DEFER: _ClassVar[NotificationAction]
    NOTIFICATION_ACTION_DISCARD: _ClassVar[NotificationAction]
NOTIFICATION_ACTION_UNSPECIFIED: NotificationAction
NOTIFICATION_ACTION_DELIVER: NotificationAction
NOTIFICATION_ACTION_SUMMARIZE: NotificationAction
NOTIFICATION_ACTION_DEFER: NotificationAction
NOTIFICATION_ACTION_DISCARD: NotificationAction

class NotificationRule(_message.Message):
    __slots__ = ("action", "delay")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DELAY_FIELD_NUMBER: _ClassVar[int]
    action: NotificationAction
    delay: _duration_pb2.Duration
    def __init__(self, action: _Optional[_Union[NotificationAction, str]] = ..., delay: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class NotificationDeliveryPolicy(_message.Message):
    __slots__ = ("default", "priorities", "sources", "decide")
    class PrioritiesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: NotificationRule
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[NotificationRule, _Mapping]] = ...) -> None: ...
    class SourcesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: NotificationRule
        def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[NotificationRule, _Mapping]] = ...) -> None: ...
    DEFAULT_FIELD_NUMBER: _ClassVar[int]
    PRIORITIES_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    DECIDE_FIELD_NUMBER: _ClassVar[int]
    default: NotificationRule
    priorities: _containers.MessageMap[str, NotificationRule]
    sources: _containers.MessageMap[str, NotificationRule]
    decide: str
    def __init__(self, default: _Optional[_Union[NotificationRule, _Mapping]] = ..., priorities: _Optional[_Mapping[str, NotificationRule]] = ..., sources: _Optional[_Mapping[str, NotificationRule]] = ..., decide: _Optional[str] = ...) -> None: ...

class NotificationSettings(_message.Message):
    __slots__ = ("delivery_policy",)
    DELIVERY_POLICY_FIELD_NUMBER: _ClassVar[int]
    delivery_policy: NotificationDeliveryPolicy
    def __init__(self, delivery_policy: _Optional[_Union[NotificationDeliveryPolicy, _Mapping]] = ...) -> None: ...
