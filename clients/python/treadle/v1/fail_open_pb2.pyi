from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class FailOpenReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAIL_OPEN_REASON_UNSPECIFIED: _ClassVar[FailOpenReason]
    FAIL_OPEN_REASON_TIMEOUT: _ClassVar[FailOpenReason]
    FAIL_OPEN_REASON_DISCONNECT: _ClassVar[FailOpenReason]
    FAIL_OPEN_REASON_NOT_ATTACHED: _ClassVar[FailOpenReason]
    FAIL_OPEN_REASON_MALFORMED: _ClassVar[FailOpenReason]
    FAIL_OPEN_REASON_DRAINING: _ClassVar[FailOpenReason]
FAIL_OPEN_REASON_UNSPECIFIED: FailOpenReason
FAIL_OPEN_REASON_TIMEOUT: FailOpenReason
FAIL_OPEN_REASON_DISCONNECT: FailOpenReason
FAIL_OPEN_REASON_NOT_ATTACHED: FailOpenReason
FAIL_OPEN_REASON_MALFORMED: FailOpenReason
FAIL_OPEN_REASON_DRAINING: FailOpenReason

class SkippedProcessor(_message.Message):
    __slots__ = ("processor_id", "hook", "reason", "count", "message")
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    HOOK_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    processor_id: str
    hook: str
    reason: FailOpenReason
    count: int
    message: str
    def __init__(self, processor_id: _Optional[str] = ..., hook: _Optional[str] = ..., reason: _Optional[_Union[FailOpenReason, str]] = ..., count: _Optional[int] = ..., message: _Optional[str] = ...) -> None: ...
