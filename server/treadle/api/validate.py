"""Checks on input before it is stored or run, each raising ``InvalidArgumentError`` with the
field path: any request message (enum numbers outside their enum, non-finite numbers), JSON
schemas (valid for their metaschema, every ``$ref`` resolving inside the schema), provider
options, ids that could never attach, and option combinations a provider is sure to refuse."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import jsonschema
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from .. import agents as a
from ..core.errors import InvalidArgumentError

PROCESSOR_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
"""What ``ProcessorService.Attach`` accepts; an agent naming anything else could never run."""
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
"""What ``ToolService.Attach`` accepts (and what the providers accept as a function name)."""

_FLOATS = (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT)
_NESTING = ("google.protobuf.Struct", "google.protobuf.ListValue")

MAX_STRUCT_DEPTH = 20
"""How deep objects and lists inside a ``Struct`` (attributes, metadata, provider options,
state values, ...) may nest. Each level is three protobuf levels on the wire, and what is stored
is read back inside a message and a listing: 20 levels stay well within the 100 levels every
protobuf runtime decodes (the Python client refuses deeper data)."""


def check_message(msg: Message, path: str = "", _depth: int = 0) -> None:
    """Every enum field holds a value of its enum; every double and float is finite; no
    ``Struct`` nests deeper than ``MAX_STRUCT_DEPTH``."""
    name = msg.DESCRIPTOR.full_name
    if name in _TIMES:
        _check_time(name, msg, path)
    if name in _NESTING:
        _depth += 1
        if _depth > MAX_STRUCT_DEPTH:
            raise InvalidArgumentError(
                f"{path or 'the request'} nests objects or lists deeper than {MAX_STRUCT_DEPTH} levels "
                "(the most that is stored and read back)"
            )
    for fd, value in msg.ListFields():
        where = f"{path}.{fd.name}" if path else fd.name
        mt = fd.message_type
        if mt is not None and mt.GetOptions().map_entry:
            vfd = mt.fields_by_name["value"]
            for key, item in value.items():
                _check_value(vfd, item, f"{where}[{key!r}]", _depth)
        elif fd.is_repeated:
            for i, item in enumerate(value):
                _check_value(fd, item, f"{where}[{i}]", _depth)
        else:
            _check_value(fd, value, where, _depth)


_TIMES = ("google.protobuf.Timestamp", "google.protobuf.Duration")


def _check_time(name: str, msg: Any, where: str) -> None:
    """A Timestamp within years 1-9999 with nanos in [0, 1e9); a Duration within 10,000 years
    whose nanos have its seconds' sign: what the protobuf runtimes convert without error."""
    seconds, nanos = msg.seconds, msg.nanos
    if name == "google.protobuf.Timestamp":
        ok = -62135596800 <= seconds <= 253402300799 and 0 <= nanos <= 999_999_999
        what = "a timestamp between the years 1 and 9999 with nanos from 0 to 999,999,999"
    else:
        ok = abs(seconds) <= 315576000000 and abs(nanos) <= 999_999_999 and not (
            (seconds > 0 and nanos < 0) or (seconds < 0 and nanos > 0))
        what = "a duration within 10,000 years whose nanos have the sign of its seconds"
    if not ok:
        raise InvalidArgumentError(f"{where or 'the request'} must be {what}, got seconds={seconds} nanos={nanos}")


def _check_value(fd: FieldDescriptor, value: Any, where: str, depth: int = 0) -> None:
    if fd.type == FieldDescriptor.TYPE_MESSAGE:
        check_message(value, where, depth)
    elif fd.type == FieldDescriptor.TYPE_ENUM:
        if value not in fd.enum_type.values_by_number:
            known = ", ".join(v.name for v in fd.enum_type.values)
            raise InvalidArgumentError(f"{where}: {value} is not a {fd.enum_type.name} value ({known})")
    elif fd.type in _FLOATS and not math.isfinite(value):
        raise InvalidArgumentError(f"{where} must be a finite number, got {value}")


def check_schema(schema: Mapping[str, Any], where: str) -> None:
    """A valid JSON Schema for its metaschema whose ``$ref``s all resolve inside it."""
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as e:
        raise InvalidArgumentError(f"{where} is not a valid JSON schema: {e.message}") from None
    for ref in _refs(schema):
        if not _resolves(schema, ref):
            raise InvalidArgumentError(
                f"{where} has a $ref {ref!r} that does not resolve inside the schema "
                "(only local references like '#/$defs/name' are followed; nothing is fetched)"
            )


def _refs(node: Any) -> list[str]:
    out: list[str] = []
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out.append(value)
            else:
                out += _refs(value)
    elif isinstance(node, list):
        for item in node:
            out += _refs(item)
    return out


def _resolves(schema: Mapping[str, Any], ref: str) -> bool:
    if not ref.startswith("#"):
        return False
    pointer = ref[1:]
    if pointer and not pointer.startswith("/"):  # a plain-name fragment: an "$anchor"
        return pointer in _anchors(schema)
    node: Any = schema
    for raw in pointer.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return False
    return isinstance(node, (Mapping, bool))


def _anchors(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, Mapping):
        if isinstance(node.get("$anchor"), str):
            out.add(node["$anchor"])
        for value in node.values():
            out |= _anchors(value)
    elif isinstance(node, list):
        for item in node:
            out |= _anchors(item)
    return out


def check_provider_options(options: Mapping[str, Any] | None, where: str) -> None:
    """``{"openai": {...}, "anthropic": {...}}``: each provider's value must be an object."""
    for provider, value in (options or {}).items():
        if not isinstance(value, Mapping):
            raise InvalidArgumentError(
                f"{where}.{provider} must be an object of that provider's options, got {type(value).__name__}"
            )


def check_attachable(agent: a.Agent, where: str = "agent") -> None:
    """Processor ids and tool names an agent names must be ones that could attach."""
    for lane in ("input_processors", "output_processors", "error_processors", "tool_payload_processors"):
        for i, ref in enumerate(getattr(agent, lane)):
            if isinstance(ref, a.ProcessorRef) and not PROCESSOR_ID.match(ref.processor_id):
                raise InvalidArgumentError(
                    f"{where}.{lane}[{i}].id {ref.processor_id!r} could never attach: use 1-128 letters, digits, "
                    "'_', '.', ':' or '-', starting with a letter or digit"
                )
    for i, name in enumerate(agent.tools):
        if isinstance(name, str) and not TOOL_NAME.match(name):
            raise InvalidArgumentError(
                f"{where}.tools[{i}] {name!r} could never attach: use 1-64 letters, digits, '_', '.' or '-'"
            )
    for lane in ("input_processors", "output_processors", "error_processors"):
        for j, variant in enumerate(agent.variants.get(lane, ())):
            for i, ref in enumerate(variant.value):
                if isinstance(ref, a.ProcessorRef) and not PROCESSOR_ID.match(ref.processor_id):
                    raise InvalidArgumentError(
                        f"{where}.{lane}_variants[{j}].value[{i}].id {ref.processor_id!r} could never attach")
    for j, variant in enumerate(agent.variants.get("tools", ())):
        for i, name in enumerate(variant.value):
            if isinstance(name, str) and not TOOL_NAME.match(name):
                raise InvalidArgumentError(
                    f"{where}.tools_variants[{j}].value[{i}] {name!r} could never attach: use 1-64 letters, "
                    "digits, '_', '.' or '-'")
    if isinstance(agent.resolver, a.ProcessorRef) and not PROCESSOR_ID.match(agent.resolver.processor_id):
        raise InvalidArgumentError(f"{where}.resolver.id {agent.resolver.processor_id!r} could never attach")


def check_call_options(opts: a.CallOptions, where: str) -> None:
    check_provider_options(opts.provider_options, f"{where}.provider_options")
    check_anthropic_thinking(opts.provider_options, opts.tool_choice, _max_tokens(opts), where)


def _max_tokens(opts: a.CallOptions) -> int | None:
    settings = opts.model_settings
    return getattr(settings, "max_output_tokens", None) if settings is not None else None


def check_anthropic_thinking(
    provider_options: Mapping[str, Any] | None, tool_choice: Any, max_tokens: int | None, where: str
) -> None:
    """Anthropic refuses extended thinking with a forced tool choice, and a max_tokens not above
    the thinking budget: refuse those here instead of sending them for a 400."""
    options = (provider_options or {}).get("anthropic")
    thinking = options.get("thinking") if isinstance(options, Mapping) else None
    if not isinstance(thinking, Mapping) or thinking.get("type") != "enabled":
        return
    if tool_choice == "required" or isinstance(tool_choice, Mapping):
        raise InvalidArgumentError(
            f"{where}: Anthropic extended thinking cannot be combined with a forced tool choice "
            "(tool_choice required or a named tool); use auto or none, or turn thinking off"
        )
    budget = thinking.get("budgetTokens", thinking.get("budget_tokens"))
    if isinstance(budget, (int, float)) and max_tokens is not None and max_tokens <= budget:
        raise InvalidArgumentError(
            f"{where}: model_settings.max_output_tokens ({max_tokens}) must be above the Anthropic "
            f"thinking budget ({int(budget)}), which counts toward it"
        )
