"""Proto <-> domain for signals, state signals, notifications and delivery policies.

Everything from a client is checked here (or by the runtime before it stores anything); errors
name the field.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from .. import agents as a
from ..core.errors import InvalidArgumentError
from ..core.messages import FilePart, TextPart
from ..signals import IfActive, IfIdle, NotificationInput, NotificationRecord, Signal, StateInput, Target
from ..signals.notifications import Decision
from ..signals.render import check_attributes
from ..signals.runtime import Accepted
from ..signals.signal import normalise_type
from ..v1 import notification_pb2, signal_pb2
from .convert import call_options_from_proto
from ..wire.data import (
    _part_from_proto,
    datetime_to_ts,
    dict_to_struct,
    enum_to_pb,
    enum_to_py,
    opt_struct,
    py_to_value,
    value_to_py,
)

_ACTIVE = signal_pb2.ActiveBehavior.DESCRIPTOR
_IDLE = signal_pb2.IdleBehavior.DESCRIPTOR
_ACTION = signal_pb2.SignalAction.DESCRIPTOR
_MODE = signal_pb2.StateMode.DESCRIPTOR
_PRIORITY = signal_pb2.NotificationPriority.DESCRIPTOR
_STATUS = signal_pb2.NotificationStatus.DESCRIPTOR
_NACTION = notification_pb2.NotificationAction.DESCRIPTOR


def target_from_proto(pb: Any) -> Target:
    return Target(
        agent_id=pb.agent_id, run_id=getattr(pb, "run_id", ""),
        resource_id=pb.resource_id, thread_id=pb.thread_id,
    )


def _contents(pb: Any, path: str) -> tuple[str, list[FilePart]]:
    if pb.contents and len(pb.parts):
        raise InvalidArgumentError(f"{path}: give contents or parts, not both")
    texts: list[str] = []
    files: list[FilePart] = []
    for i, part in enumerate(pb.parts):
        p = _part_from_proto(part, f"{path}.parts[{i}]")
        if isinstance(p, TextPart):
            texts.append(p.text)
        elif isinstance(p, FilePart):
            files.append(p)
        else:
            raise InvalidArgumentError(f"{path}.parts[{i}]: only text and file parts are allowed")
    return pb.contents or "".join(texts), files


LEADING_ATTRIBUTES = ("id", "name", "from")
"""A protobuf ``Struct`` has no order, so attributes given as one render in a stable order:
these first, then the rest alphabetically. ``ordered_attributes`` keep the caller's order."""


def _attributes(pb: Any, name: str, path: str) -> dict[str, Any]:
    """The request's attributes in the order they render: ``ordered_attributes`` as given, or
    the ``attributes`` Struct in the stable order above."""
    ordered = pb.ordered_attributes
    if len(ordered):
        if pb.HasField(name) and len(getattr(pb, name).fields):
            raise InvalidArgumentError(f"{path}: give {name} or ordered_attributes, not both")
        out: dict[str, Any] = {}
        for i, attr in enumerate(ordered):
            if attr.name in out:
                raise InvalidArgumentError(f"{path}.ordered_attributes[{i}]: the name {attr.name!r} is given twice")
            out[attr.name] = value_to_py(attr.value) if attr.HasField("value") else None
        check_attributes(out, f"{path}.ordered_attributes")
        return out
    attrs = opt_struct(pb, name) or {}
    check_attributes(attrs, f"{path}.{name}")
    lead = [k for k in LEADING_ATTRIBUTES if k in attrs]
    return {k: attrs[k] for k in [*lead, *sorted(k for k in attrs if k not in lead)]}


def _ordered_to_proto(attributes: dict[str, Any], out: Any) -> None:
    """Attributes into a ``Struct`` field ``attributes`` and, in order, ``ordered_attributes``."""
    if attributes:
        dict_to_struct(attributes, out.attributes)
    for name, value in attributes.items():
        py_to_value(value, out.ordered_attributes.add(name=name).value)


def message_signal_from_proto(pb: signal_pb2.SignalMessage, path: str = "message") -> Signal:
    contents, files = _contents(pb, path)
    return Signal(
        type="user", tag_name="user", contents=contents, files=files,
        attributes=_attributes(pb, "attributes", path), metadata=opt_struct(pb, "metadata"),
        provider_options=opt_struct(pb, "provider_options"),
    )


def signal_from_proto(pb: signal_pb2.Signal, path: str = "signal") -> Signal:
    kind, tag = normalise_type(pb.type, pb.tag_name)
    contents, files = _contents(pb, path)
    return Signal(
        type=kind, tag_name=tag, contents=contents, files=files,
        attributes=_attributes(pb, "attributes", path), metadata=opt_struct(pb, "metadata"),
        provider_options=opt_struct(pb, "provider_options"),
    )


def if_active_from_proto(pb: signal_pb2.IfActive) -> IfActive:
    behavior = enum_to_py(_ACTIVE, pb.behavior) or "deliver"
    return IfActive(behavior, _attributes(pb, "attributes", "if_active") or None)  # type: ignore[arg-type]


def if_idle_from_proto(pb: signal_pb2.IfIdle) -> IfIdle:
    behavior = enum_to_py(_IDLE, pb.behavior) or "wake"
    options = options_json = None
    if pb.HasField("stream_options"):
        options = call_options_from_proto(pb.stream_options, "if_idle.stream_options")
        options_json = json_format.MessageToDict(pb.stream_options)
    return IfIdle(behavior, _attributes(pb, "attributes", "if_idle") or None, options, options_json)  # type: ignore[arg-type]


def options_from_json(data: dict[str, Any]) -> a.CallOptions:
    """Stored ``stream_options`` back to call options (queued messages after a restart)."""
    from ..v1 import agent_pb2

    return call_options_from_proto(json_format.ParseDict(data, agent_pb2.CallOptions()))


def state_from_proto(pb: signal_pb2.StateSignal) -> StateInput:
    return StateInput(
        id=pb.id, cache_key=pb.cache_key, mode=enum_to_py(_MODE, pb.mode) or "snapshot",  # type: ignore[arg-type]
        value=value_to_py(pb.value) if pb.HasField("value") else None,
        delta=value_to_py(pb.delta) if pb.HasField("delta") else None,
        contents=pb.contents, attributes=_attributes(pb, "attributes", "state"),
        metadata=opt_struct(pb, "metadata"), tag_name=pb.tag_name,
    )


def notification_from_proto(pb: signal_pb2.Notification) -> NotificationInput:
    return NotificationInput(
        source=pb.source, kind=pb.kind, summary=pb.summary,
        priority=enum_to_py(_PRIORITY, pb.priority) or "medium",  # type: ignore[arg-type]
        payload=value_to_py(pb.payload) if pb.HasField("payload") else None,
        dedupe_key=pb.dedupe_key, coalesce_key=pb.coalesce_key,
        attributes=_attributes(pb, "attributes", "notification"), metadata=opt_struct(pb, "metadata"),
    )


def statuses_from_proto(values: Any) -> list[str]:
    out = []
    for v in values:
        name = enum_to_py(_STATUS, v)
        if name is None:
            raise InvalidArgumentError("statuses: NOTIFICATION_STATUS_UNSPECIFIED is not a status")
        out.append(name)
    return out


# --- to proto ---------------------------------------------------------------------------------


def accepted_to_proto(acc: Accepted, out: signal_pb2.SignalAccepted) -> None:
    out.action = enum_to_pb(_ACTION, acc.action)
    out.run_id = acc.run_id if acc.action in ("wake", "deliver") else ""


def created_to_proto(signal: Signal, out: signal_pb2.CreatedSignal) -> None:
    out.id, out.type, out.tag_name = signal.id, signal.type, signal.tag_name
    datetime_to_ts(signal.created_at, out.created_at)
    _ordered_to_proto(signal.attributes, out)


def record_to_proto(r: NotificationRecord, out: signal_pb2.NotificationRecord) -> None:
    out.id, out.resource_id, out.thread_id = r.id, r.key[0], r.key[1]
    out.source, out.kind, out.summary = r.source, r.kind, r.summary
    out.priority = enum_to_pb(_PRIORITY, r.priority)
    out.status = enum_to_pb(_STATUS, r.status)
    if r.payload is not None:
        py_to_value(r.payload, out.payload)
    out.dedupe_key, out.coalesce_key, out.coalesced_count = r.dedupe_key, r.coalesce_key, r.coalesced_count
    if r.deliver_at is not None:
        datetime_to_ts(r.deliver_at, out.deliver_at)
    if r.summary_at is not None:
        datetime_to_ts(r.summary_at, out.summary_at)
    out.delivery_attempts = r.delivery_attempts
    out.delivered_signal_id, out.summary_signal_id = r.delivered_signal_id, r.summary_signal_id
    _ordered_to_proto(r.attributes, out)
    if r.metadata:
        dict_to_struct(r.metadata, out.metadata)
    datetime_to_ts(r.create_time, out.create_time)
    datetime_to_ts(r.update_time, out.update_time)


def decision_to_proto(d: Decision, out: signal_pb2.NotificationDecision) -> None:
    out.action = enum_to_pb(_NACTION, d.action)
    if d.deliver_at is not None:
        datetime_to_ts(d.deliver_at, out.deliver_at)
    if d.summary_at is not None:
        datetime_to_ts(d.summary_at, out.summary_at)
    out.rule = d.rule
