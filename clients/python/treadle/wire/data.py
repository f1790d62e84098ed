"""Proto <-> domain for JSON values, enums, stored messages and stream chunks.

The domain dataclasses in ``chunks.py`` and ``messages.py`` use the proto field names, so one
descriptor-driven converter serves every payload and part type; the few differences (enums,
``google.protobuf.Value``/``Struct``/``Timestamp``, nested messages) are handled by field type.
Adding a chunk type to the proto and a payload class with the same field names needs no change
here.

Conversion from proto raises ``InvalidArgumentError`` with the field path; conversion to proto
trusts the domain objects (a failure there is a bug, reported as INTERNAL).
"""

from __future__ import annotations

import base64
import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from google.protobuf import struct_pb2, timestamp_pb2
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message as PbMessage

from ..core import chunks as ch
from ..core import messages as m
from ..core.errors import InvalidArgumentError
from ..v1 import chunk_pb2, message_pb2

# --- JSON values -------------------------------------------------------------------------------

_MAX_SAFE_INT = 2**53


def py_to_value(obj: Any, out: struct_pb2.Value) -> None:
    """Write a Python value into ``out``. Values JSON cannot hold are made JSON-like, not refused:
    a tool may return a dataclass or a datetime, and the client still deserves to see it."""
    if obj is None:
        out.null_value = struct_pb2.NULL_VALUE
    elif isinstance(obj, bool):
        out.bool_value = obj
    elif isinstance(obj, int | float):
        out.number_value = obj
    elif isinstance(obj, str):
        out.string_value = obj
    elif isinstance(obj, Mapping):
        out.struct_value.Clear()  # marks the struct branch set even when the mapping is empty
        fields = out.struct_value.fields
        for key, val in obj.items():
            py_to_value(val, fields[str(key)])
    elif isinstance(obj, list | tuple):
        out.list_value.Clear()
        for val in obj:
            py_to_value(val, out.list_value.values.add())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        py_to_value(dataclasses.asdict(obj), out)
    elif isinstance(obj, datetime):
        out.string_value = obj.isoformat()
    elif isinstance(obj, bytes):
        out.string_value = base64.b64encode(obj).decode("ascii")
    else:
        out.string_value = str(obj)


def value_to_py(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "number_value":
        n = value.number_value
        # JSON has one number type; give integral numbers back as int, as json.loads would.
        return int(n) if n.is_integer() and abs(n) < _MAX_SAFE_INT else n
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return struct_to_dict(value.struct_value)
    if kind == "list_value":
        return [value_to_py(v) for v in value.list_value.values]
    return None


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    return {k: value_to_py(v) for k, v in struct.fields.items()}


def dict_to_struct(obj: Mapping[str, Any], out: struct_pb2.Struct) -> None:
    out.Clear()
    for key, val in obj.items():
        py_to_value(val, out.fields[str(key)])


def opt_struct(msg: PbMessage, name: str) -> dict[str, Any] | None:
    """The Struct field ``name`` as a dict, or None when it is not set."""
    return struct_to_dict(getattr(msg, name)) if msg.HasField(name) else None


def datetime_to_ts(dt: datetime, out: timestamp_pb2.Timestamp) -> None:
    out.FromDatetime(dt if dt.tzinfo else dt.replace(tzinfo=UTC))


def ts_to_datetime(ts: timestamp_pb2.Timestamp) -> datetime:
    return ts.ToDatetime(tzinfo=UTC)


# --- enums -------------------------------------------------------------------------------------

# How each enum's value names read in the domain (FINISH_REASON_CONTENT_FILTER -> "content-filter").
_ENUM_STYLE: dict[str, Callable[[str], str]] = {
    "treadle.v1.ChunkFrom": str.upper,
    "treadle.v1.FailurePolicy": str.lower,
    "treadle.v1.FailOpenReason": str.lower,
}
# What an unset (0) enum means where the domain field has no default.
_ENUM_UNSET: dict[str, str] = {"treadle.v1.FinishReason": "unknown", "treadle.v1.SourceType": "url"}


@functools.cache
def _enum_maps(enum: EnumDescriptor) -> tuple[dict[int, str], dict[str, int]]:
    style = _ENUM_STYLE.get(enum.full_name, lambda s: s.lower().replace("_", "-"))
    prefix = enum.values[0].name.removesuffix("UNSPECIFIED")
    to_py = {v.number: style(v.name.removeprefix(prefix)) for v in enum.values if v.number}
    return to_py, {name: num for num, name in to_py.items()}


def enum_to_py(enum: EnumDescriptor, number: int) -> str | None:
    """The domain name of an enum value; None for the unset value."""
    return _enum_maps(enum)[0].get(number)


def enum_to_pb(enum: EnumDescriptor, name: str | None) -> Any:
    """The enum number for a domain name (typed ``Any``: each generated enum is its own type)."""
    if not name:
        return 0
    try:
        return _enum_maps(enum)[1][name]
    except KeyError:
        raise ValueError(f"{name!r} is not a {enum.full_name} value") from None


# --- dataclass <-> message, by field name ------------------------------------------------------

_NESTED: dict[str, type] = {
    "treadle.v1.Usage": ch.Usage,
    "treadle.v1.ToolCall": ch.ToolCall,
    "treadle.v1.ToolResult": ch.ToolResult,
    "treadle.v1.Tripwire": ch.Tripwire,
    "treadle.v1.ErrorChunk": ch.ErrorPayload,
    "treadle.v1.SkippedProcessor": ch.SkippedProcessor,
}


_MESSAGE, _ENUM, _PRESENCE, _SCALAR = range(4)
_FILL_PLANS: dict[Any, list[tuple[str, int, FieldDescriptor]]] = {}


def _fill_plan(descriptor: Any) -> list[tuple[str, int, FieldDescriptor]]:
    """(name, kind, field) of each field of a message type, worked out once per type."""
    plan = _FILL_PLANS.get(descriptor)
    if plan is None:
        plan = _FILL_PLANS[descriptor] = [
            (fd.name, _MESSAGE if fd.message_type is not None else _ENUM if fd.enum_type is not None
             else _PRESENCE if fd.has_presence else _SCALAR, fd)
            for fd in descriptor.fields
        ]
    return plan


def fill(msg: PbMessage, obj: Any) -> None:
    """Copy the dataclass ``obj``'s fields into ``msg``, matching by name."""
    msg.SetInParent()  # an all-default payload (e.g. ``abort`` without reason) still counts
    for name, kind, fd in _fill_plan(msg.DESCRIPTOR):
        value = getattr(obj, name, None)
        if value is None:
            continue
        if kind == _SCALAR:
            setattr(msg, name, value)
        elif kind == _MESSAGE:
            _fill_message_field(msg, fd, value)
        elif kind == _ENUM:
            setattr(msg, name, enum_to_pb(fd.enum_type, value))
        elif value:  # a oneof scalar (FilePart data/url): set only the branch that has a value
            setattr(msg, name, value)


def _fill_message_field(msg: PbMessage, fd: FieldDescriptor, value: Any) -> None:
    name = fd.message_type.full_name
    target = getattr(msg, fd.name)
    if fd.is_repeated:
        for item in value:
            fill(target.add(), item)
    elif name == "google.protobuf.Value":
        py_to_value(value, target)
    elif name == "google.protobuf.Struct":
        dict_to_struct(value, target)
    elif name == "google.protobuf.Timestamp":
        if isinstance(value, datetime):
            datetime_to_ts(value, target)
        else:
            target.FromNanoseconds(int(value * 1e9))
    else:
        fill(target, value)


def build(cls: type, msg: PbMessage, path: str) -> Any:
    """A ``cls`` instance from ``msg``; fields unset in the proto keep the dataclass defaults."""
    kwargs: dict[str, Any] = {}
    for name, fd, has_default in _build_plan(cls, msg.DESCRIPTOR):
        value = _read_field(msg, fd, path, has_default)
        if value is not _UNSET:
            kwargs[name] = value
    return cls(**kwargs)


_PLANS: dict[tuple[type, Any], list[tuple[str, FieldDescriptor, bool]]] = {}


def _build_plan(cls: type, descriptor: Any) -> list[tuple[str, FieldDescriptor, bool]]:
    """(name, proto field, has a default) of each init field of ``cls`` the message has: worked
    out once per class and message type, not per conversion."""
    plan = _PLANS.get((cls, descriptor))
    if plan is None:
        fields = descriptor.fields_by_name
        plan = []
        for f in dataclasses.fields(cls):
            fd = fields.get(f.name)
            if fd is None or not f.init:
                continue
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            plan.append((f.name, fd, has_default))
        _PLANS[(cls, descriptor)] = plan
    return plan


_UNSET = object()


def _read_field(msg: PbMessage, fd: FieldDescriptor, parent: str, has_default: bool) -> Any:
    """The field's value; ``parent`` is the path of ``msg`` (the field's own path is only built
    for nested messages and errors)."""
    raw = getattr(msg, fd.name)
    if fd.message_type is not None:
        name = fd.message_type.full_name
        if fd.is_repeated:
            cls = _NESTED[name]
            path = f"{parent}.{fd.name}"
            return [build(cls, item, f"{path}[{i}]") for i, item in enumerate(raw)]
        if not msg.HasField(fd.name):
            return _UNSET if has_default else None
        if name == "google.protobuf.Value":
            return value_to_py(raw)
        if name == "google.protobuf.Struct":
            return struct_to_dict(raw)
        if name == "google.protobuf.Timestamp":
            return raw.ToNanoseconds() / 1e9
        return build(_NESTED[name], raw, f"{parent}.{fd.name}")
    if fd.enum_type is not None:
        value = enum_to_py(fd.enum_type, raw)
        if value is None and raw:
            raise InvalidArgumentError(f"{parent}.{fd.name}: unknown {fd.enum_type.name} value {raw}")
        if value is None:
            if has_default:
                return _UNSET
            return _ENUM_UNSET.get(fd.enum_type.full_name, _UNSET)
        return value
    return raw


# --- messages ----------------------------------------------------------------------------------

_PART_FIELD: dict[type, str] = {
    m.TextPart: "text",
    m.ReasoningPart: "reasoning",
    m.FilePart: "file",
    m.SourcePart: "source",
    m.StepStartPart: "step_start",
    m.ToolInvocationPart: "tool_invocation",
    m.ErrorPart: "error",
    m.DataPart: "data",
}
_PART_CLASS: dict[str, type] = {v: k for k, v in _PART_FIELD.items()}


def message_to_proto(msg: m.Message, out: message_pb2.Message | None = None) -> message_pb2.Message:
    out = out if out is not None else message_pb2.Message()
    out.id = msg.id
    out.role = enum_to_pb(message_pb2.MessageRole.DESCRIPTOR, msg.role)
    datetime_to_ts(msg.created_at, out.created_at)
    out.thread_id = msg.thread_id
    out.resource_id = msg.resource_id
    out.type = msg.type
    out.content.format = msg.content.format
    if msg.content.metadata is not None:
        dict_to_struct(msg.content.metadata, out.content.metadata)
    for part in msg.content.parts:
        pb = out.content.parts.add()
        fill(getattr(pb, _PART_FIELD[type(part)]), part)
        if part.provider_metadata is not None:
            dict_to_struct(part.provider_metadata, pb.provider_metadata)
    return out


def message_from_proto(pb: message_pb2.Message, path: str = "message") -> m.Message:
    """A domain message; a missing id or creation time is filled in, as the proto promises."""
    role = enum_to_py(message_pb2.MessageRole.DESCRIPTOR, pb.role)
    if role is None:
        raise InvalidArgumentError(f"{path}.role is required (e.g. MESSAGE_ROLE_USER)")
    if pb.content.format not in (0, 2):
        raise InvalidArgumentError(f"{path}.content.format must be 2, got {pb.content.format}")
    parts: list[m.Part] = []
    for i, part in enumerate(pb.content.parts):
        parts.append(_part_from_proto(part, f"{path}.content.parts[{i}]"))
    content = m.MessageContent(parts=parts, metadata=opt_struct(pb.content, "metadata"))
    return m.Message(
        id=pb.id or m.new_id(),
        role=role,  # type: ignore[arg-type]  # checked against the enum above
        content=content,
        created_at=ts_to_datetime(pb.created_at) if pb.HasField("created_at") else m.utcnow(),
        thread_id=pb.thread_id,
        resource_id=pb.resource_id,
        type=pb.type,
    )


def system_messages_to_proto(messages: Iterable[m.SystemMessage], out: Any) -> None:
    for s in messages:
        item = out.add(content=s.content)
        if s.provider_options:
            dict_to_struct(s.provider_options, item.provider_options)


def system_messages_from_proto(items: Iterable[message_pb2.SystemMessage]) -> list[m.SystemMessage]:
    return [m.SystemMessage(s.content, opt_struct(s, "provider_options")) for s in items]


def _part_from_proto(pb: message_pb2.Part, path: str) -> m.Part:
    kind = pb.WhichOneof("part")
    if kind is None:
        raise InvalidArgumentError(f"{path}: exactly one part kind (text, reasoning, ...) must be set")
    inner = getattr(pb, kind)
    if kind == "data" and not inner.name.startswith("data-"):
        raise InvalidArgumentError(f"{path}.data.name must start with 'data-', got {inner.name!r}")
    if kind == "source" and not inner.id:
        raise InvalidArgumentError(f"{path}.source.id is required")
    if kind == "file" and not inner.mime_type:
        raise InvalidArgumentError(f"{path}.file.mime_type is required")
    if kind == "tool_invocation" and not (inner.tool_call_id and inner.tool_name):
        raise InvalidArgumentError(f"{path}.tool_invocation needs tool_call_id and tool_name")
    part = build(_PART_CLASS[kind], inner, f"{path}.{kind}")
    part.provider_metadata = opt_struct(pb, "provider_metadata")
    return part  # type: ignore[no-any-return]


# --- chunks ------------------------------------------------------------------------------------

_CHUNK_ONEOF = chunk_pb2.Chunk.DESCRIPTOR.oneofs_by_name["chunk"]
_CHUNK_FIELDS = frozenset(f.name for f in _CHUNK_ONEOF.fields)
_FROM = chunk_pb2.ChunkFrom.DESCRIPTOR
_FROM_NUMBERS: dict[str, int] = {"": 0, **_enum_maps(_FROM)[1]}


def chunk_to_proto(chunk: ch.Chunk, out: chunk_pb2.Chunk | None = None) -> chunk_pb2.Chunk:
    out = out if out is not None else chunk_pb2.Chunk()
    out.run_id = chunk.run_id
    number = _FROM_NUMBERS.get(chunk.from_)
    # `from` is a Python keyword
    setattr(out, "from", number if number is not None else enum_to_pb(_FROM, chunk.from_))
    if chunk.type == "text-delta" and chunk.metadata is None:
        # Most chunks of a run: set the two fields directly (what ``fill`` does, without its
        # walk over the descriptor). Setting a field, even to its default, makes the branch
        # present.
        p = chunk.payload
        if p.provider_metadata is None:
            delta = out.text_delta
            delta.id = p.id
            delta.text = p.text
            return out
    if chunk.metadata is not None:
        dict_to_struct(chunk.metadata, out.metadata)
    if chunk.is_data:
        out.data.name = chunk.type
        out.data.transient = chunk.transient
        out.data.id = chunk.id
        if chunk.data is not None:
            py_to_value(chunk.data, out.data.data)
        return out
    field = chunk.type.replace("-", "_")
    if field not in _CHUNK_FIELDS or field == "data":
        raise ValueError(f"chunk type {chunk.type!r} has no proto form")
    if field == "tool_output":  # recursive: the inner chunk is a whole Chunk
        p = chunk.payload
        out.tool_output.tool_call_id, out.tool_output.tool_name = p.tool_call_id, p.tool_name
        out.tool_output.path.extend(p.path)
        if p.output is not None:
            chunk_to_proto(p.output, out.tool_output.output)
        return out
    fill(getattr(out, field), chunk.payload)
    return out


def chunk_from_proto(pb: chunk_pb2.Chunk, path: str = "chunk") -> ch.Chunk:
    field = pb.WhichOneof("chunk")
    if field is None:
        raise InvalidArgumentError(f"{path}: exactly one chunk payload (textDelta, ...) must be set")
    origin = enum_to_py(_FROM, getattr(pb, "from")) or "AGENT"
    metadata = opt_struct(pb, "metadata")
    if field == "data":
        d = pb.data
        if not d.name.startswith("data-"):
            raise InvalidArgumentError(f"{path}.data.name must start with 'data-', got {d.name!r}")
        return ch.Chunk(
            type=d.name,
            run_id=pb.run_id,
            from_=origin,  # type: ignore[arg-type]
            metadata=metadata,
            data=value_to_py(d.data) if d.HasField("data") else None,
            transient=d.transient,
            id=d.id,
        )
    type_name = field.replace("_", "-")
    if field == "tool_output":
        t = pb.tool_output
        inner = chunk_from_proto(t.output, f"{path}.tool_output.output") if t.HasField("output") else None
        payload: Any = ch.ToolOutput(t.tool_call_id, t.tool_name, inner, list(t.path))
    else:
        payload = build(ch.PAYLOAD_TYPES[type_name], getattr(pb, field), f"{path}.{field}")
    return ch.Chunk(
        type=type_name, payload=payload, run_id=pb.run_id, from_=origin, metadata=metadata  # type: ignore[arg-type]
    )


# --- chunks as bytes ---------------------------------------------------------------------------

_LEN, _VARINT = 2, 0  # wire types
_SMALL = [bytes((n,)) for n in range(128)]
"""The varints of 0-127: one byte each."""


def _varint(n: int) -> bytes:
    if n < 128:
        return _SMALL[n]
    out = bytearray()
    while n >= 128:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _tag(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


_CHUNK_FIELD = chunk_pb2.Chunk.DESCRIPTOR.fields_by_name
_RUN_ID_TAG = _tag(_CHUNK_FIELD["run_id"].number, _LEN)
_FROM_TAG = _tag(_CHUNK_FIELD["from"].number, _VARINT)
_TEXT_DELTA_TAG = _tag(_CHUNK_FIELD["text_delta"].number, _LEN)
_DELTA_FIELD = chunk_pb2.TextDeltaChunk.DESCRIPTOR.fields_by_name
_DELTA_ID_TAG = _tag(_DELTA_FIELD["id"].number, _LEN)
_DELTA_TEXT_TAG = _tag(_DELTA_FIELD["text"].number, _LEN)
_CHUNKS_TAG = b"\n"
"""Field 1, length-delimited: a ``StreamResponse``'s (and a ``SubscribeResponse``'s) chunks."""


class ChunkEncoder:
    """Chunks as serialized ``Chunk`` messages: the bytes ``chunk_to_proto(c).SerializeToString()``
    gives, byte for byte. A text delta (most chunks of a run) is written straight from its two
    strings, with the run id and the part id it shares with the chunks around it encoded once;
    every other chunk goes through ``chunk_to_proto``. One encoder per stream: it remembers the
    last run and text part it saw."""

    __slots__ = ("_run_id", "_from", "_head_only", "_head", "_part", "_part_id", "_part_text")

    def __init__(self) -> None:
        self._run_id: str | None = None
        self._from = ""
        self._head_only = b""
        """``run_id`` and ``from`` of the last run seen, encoded."""
        self._head = b""
        """``_head_only`` and the ``text_delta`` tag."""
        self._part: str | None = None
        self._part_id = b""
        """The ``id`` field of the last text part seen, encoded."""
        self._part_text = b""
        """``_part_id`` and the ``text`` tag."""

    def encode(self, chunk: ch.Chunk) -> bytes:
        """``chunk`` as a serialized ``Chunk``."""
        pieces: list[bytes] = []
        self.add(chunk, pieces)
        return b"".join(pieces[2:])  # without the field's tag and length

    def add(self, chunk: ch.Chunk, out: list[bytes]) -> int:
        """Append ``chunk`` as one of a message's ``chunks`` (field 1: its tag, length and
        ``Chunk``) to ``out``, the pieces of the message to join; returns how many bytes that is."""
        if chunk.type == "text-delta" and chunk.metadata is None:
            p = chunk.payload
            if p.provider_metadata is None:
                if chunk.run_id != self._run_id or chunk.from_ != self._from:
                    self._run(chunk.run_id, chunk.from_)
                if p.id != self._part:
                    self._text_part(p.id)
                data = p.text.encode()
                n = len(data)
                inner = len(self._part_text) + (_vlen(n) + n if n else -1)  # no text: no text field
                body = len(self._head) + _vlen(inner) + inner
                if body < 128:  # every length one byte (a short delta)
                    if n:
                        out += (_CHUNKS_TAG, _SMALL[body], self._head, _SMALL[inner], self._part_text, _SMALL[n], data)
                    else:
                        out += (_CHUNKS_TAG, _SMALL[body], self._head, _SMALL[inner], self._part_id)
                    return body + 2
                text = _varint(n) + data if n else b""
                message = self._head + _varint(inner) + (self._part_text + text if n else self._part_id)
                out += (_CHUNKS_TAG, _varint(body), message)
                return 1 + len(_varint(body)) + body
        message = self._other(chunk)
        length = _varint(len(message))
        out += (_CHUNKS_TAG, length, message)
        return 1 + len(length) + len(message)

    def _other(self, chunk: ch.Chunk) -> bytes:
        """A chunk that is not a plain text delta: written from its payload's plain fields
        (strings, integers, booleans, enums, messages of those) when it has no others, else
        through ``chunk_to_proto``."""
        if chunk.metadata is None:
            found = _PAYLOAD_FIELDS.get(chunk.type)
            if found is not None:
                tag, descriptor = found
                payload = _plain(chunk.payload, descriptor)
                if payload is not None:
                    if chunk.run_id != self._run_id or chunk.from_ != self._from:
                        self._run(chunk.run_id, chunk.from_)
                    return self._head_only + tag + _varint(len(payload)) + payload
        return chunk_to_proto(chunk).SerializeToString()

    def _run(self, run_id: str, origin: str) -> None:
        number = _FROM_NUMBERS.get(origin)
        if number is None:
            number = enum_to_pb(_FROM, origin)
        raw = run_id.encode()
        head = _RUN_ID_TAG + _varint(len(raw)) + raw if raw else b""
        if number:
            head += _FROM_TAG + _varint(number)
        self._run_id, self._from, self._head_only, self._head = run_id, origin, head, head + _TEXT_DELTA_TAG

    def _text_part(self, part: str) -> None:
        raw = part.encode()
        self._part = part
        self._part_id = _DELTA_ID_TAG + _varint(len(raw)) + raw if raw else b""
        self._part_text = self._part_id + _DELTA_TEXT_TAG


_PAYLOAD_FIELDS: dict[str, tuple[bytes, Any]] = {
    fd.name.replace("_", "-"): (_tag(fd.number, _LEN), fd.message_type)
    for fd in _CHUNK_ONEOF.fields if fd.name not in ("data", "tool_output")
}
"""Chunk type -> the tag of its payload field and the payload's message type."""

_STRING, _INT, _BOOL, _ENUMERATED, _NESTED_MESSAGE, _WELL_KNOWN = range(6)
_INTS = frozenset({FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT32,
                   FieldDescriptor.TYPE_UINT64})
_WRITE_PLANS: dict[Any, list[tuple[int, str, bytes, Any, bool]] | None] = {}


def _write_plan(descriptor: Any) -> list[tuple[int, str, bytes, Any, bool]] | None:
    """(kind, name, tag, enum or message type, repeated) of each field, in field-number order (as
    protobuf writes them); None for a message with fields of other kinds (floats, bytes, maps,
    oneofs, scalars with presence), which protobuf writes instead. A ``Struct``, ``Value`` or
    ``Timestamp`` field is planned, but set it leaves the message to protobuf too."""
    if descriptor in _WRITE_PLANS:
        return _WRITE_PLANS[descriptor]
    plan: list[tuple[int, str, bytes, Any, bool]] | None = []
    for fd in sorted(descriptor.fields, key=lambda f: f.number):
        mt = fd.message_type
        if fd.containing_oneof is not None or (fd.has_presence and mt is None):
            plan = None
        elif mt is not None:
            if mt.GetOptions().map_entry:
                plan = None
            elif mt.full_name.startswith("google.protobuf."):  # Struct, Value, Timestamp: only unset
                plan.append((_WELL_KNOWN, fd.name, b"", None, False))  # type: ignore[union-attr]
            else:
                plan.append((_NESTED_MESSAGE, fd.name, _tag(fd.number, _LEN), mt, fd.is_repeated))  # type: ignore[union-attr]
        elif fd.is_repeated:
            plan = None
        elif fd.type == FieldDescriptor.TYPE_STRING:
            plan.append((_STRING, fd.name, _tag(fd.number, _LEN), None, False))  # type: ignore[union-attr]
        elif fd.type in _INTS:
            plan.append((_INT, fd.name, _tag(fd.number, _VARINT), None, False))  # type: ignore[union-attr]
        elif fd.type == FieldDescriptor.TYPE_BOOL:
            plan.append((_BOOL, fd.name, _tag(fd.number, _VARINT), None, False))  # type: ignore[union-attr]
        elif fd.type == FieldDescriptor.TYPE_ENUM:
            plan.append((_ENUMERATED, fd.name, _tag(fd.number, _VARINT), fd.enum_type, False))  # type: ignore[union-attr]
        else:
            plan = None
        if plan is None:
            break
    _WRITE_PLANS[descriptor] = plan
    return plan


def _plain(obj: Any, descriptor: Any) -> bytes | None:
    """The dataclass ``obj`` serialized as ``descriptor``'s message, as ``fill`` then protobuf
    would write it; None when a field needs protobuf (see ``_write_plan``) or holds a value of
    another type than the field's."""
    plan = _write_plan(descriptor)
    if plan is None:
        return None
    out: list[bytes] = []
    for kind, name, tag, kind_of, repeated in plan:
        value = getattr(obj, name, None)
        if value is None:
            continue
        if kind == _STRING:
            if value.__class__ is not str:
                return None
            if value:
                raw = value.encode()
                out += (tag, _varint(len(raw)), raw)
        elif kind == _INT:
            if value.__class__ is not int or value < 0:
                return None
            if value:
                out += (tag, _varint(value))
        elif kind == _BOOL:
            if value.__class__ is not bool:
                return None
            if value:
                out += (tag, b"\x01")
        elif kind == _ENUMERATED:
            number = enum_to_pb(kind_of, value)
            if number:
                out += (tag, _varint(number))
        elif kind == _WELL_KNOWN:
            return None  # set: protobuf writes it
        else:
            for item in value if repeated else (value,):
                inner = _plain(item, kind_of)
                if inner is None:
                    return None
                out += (tag, _varint(len(inner)), inner)
    return b"".join(out)


def _vlen(n: int) -> int:
    """How many bytes the varint of ``n`` (at least 0) takes."""
    return 1 if n < 128 else (n.bit_length() + 6) // 7
