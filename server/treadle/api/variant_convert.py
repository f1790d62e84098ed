"""Proto <-> domain for an agent's per-request variants (``Agent.*_variants``, ``resolver``) and
the config file's short form of them.

In a config file (or any proto-JSON agent) a field may be written as its list of variants::

    model:
      - value: openai/gpt-4o
        rules: {operator: AND, conditions: [{field: tier, operator: equals, value: pro}]}
      - value: openai/gpt-4o-mini

``config_shape`` moves such lists to the proto's ``*Variants`` fields; list fields (``tools``,
the processor lanes) may mix plain entries with ``{value, rules}`` entries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import json_format

from .. import agents as a
from ..core.errors import InvalidArgumentError
from ..core.messages import SystemMessage
from ..rules import GROUP_OPERATORS, Rule, check_rule
from ..v1 import agent_pb2
from ..variants import Variant
from ..wire.data import system_messages_from_proto, system_messages_to_proto

_SCALARS = {"model": "modelVariants", "instructions": "instructionsVariants",
            "defaultOptions": "defaultOptionsVariants", "default_options": "defaultOptionsVariants"}
_LISTS = {"tools": "toolsVariants", "inputProcessors": "inputProcessorsVariants",
          "outputProcessors": "outputProcessorsVariants", "errorProcessors": "errorProcessorsVariants",
          "input_processors": "inputProcessorsVariants", "output_processors": "outputProcessorsVariants",
          "error_processors": "errorProcessorsVariants"}


def _is_variant(entry: Any) -> bool:
    return isinstance(entry, dict) and ("value" in entry or "rules" in entry)


def config_shape(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with fields written as variant lists moved to their ``*Variants`` fields."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for key, target in _SCALARS.items():
        value = out.get(key)
        if isinstance(value, list) and (key != "instructions" or any(_is_variant(v) for v in value)):
            if key == "instructions" and not all(_is_variant(v) for v in value):
                continue
            del out[key]
            out[target] = [*out.get(target, []), *value]
    for key, target in _LISTS.items():
        value = out.get(key)
        if isinstance(value, list) and any(_is_variant(v) for v in value):
            out[key] = [v for v in value if not _is_variant(v)]
            out[target] = [*out.get(target, []), *(v for v in value if _is_variant(v))]
    for target in ("instructionsVariants",):
        for v in out.get(target, []):  # `value` may be a string or a list of system messages
            if isinstance(v, dict) and isinstance(v.get("value"), list):
                v["messages"] = v.pop("value")
    return out


# --- rules --------------------------------------------------------------------------------------


def rule_from_proto(pb: agent_pb2.VariantRule, path: str) -> Rule:
    """A checked rule (operators, depth): ``InvalidArgumentError`` naming ``path``."""
    return check_rule(_rule(pb), path)


def _rule(pb: agent_pb2.VariantRule) -> Rule:
    group = not pb.field
    operator = pb.operator.upper() if group and pb.operator.upper() in GROUP_OPERATORS else \
        pb.operator if group else pb.operator.lower()
    value = json_format.MessageToDict(pb.value) if pb.HasField("value") else None
    return Rule(field=pb.field, operator=operator, value=value,
                conditions=tuple(_rule(c) for c in pb.conditions))


def rule_to_proto(rule: Rule, out: agent_pb2.VariantRule) -> None:
    out.field, out.operator = rule.field, rule.operator
    if rule.value is not None:
        json_format.ParseDict(rule.value, out.value)
    for c in rule.conditions:
        rule_to_proto(c, out.conditions.add())


def _rules(pb: Any, path: str) -> Rule | None:
    return rule_from_proto(pb.rules, f"{path}.rules") if pb.HasField("rules") else None


# --- variants -----------------------------------------------------------------------------------


def variants_from_proto(
    pb: agent_pb2.Agent, path: str, refs: Callable[[Any, str], list[Any]],
    names: Callable[[Any, str], list[Any]], options: Callable[[Any, str], a.CallOptions],
) -> dict[str, list[Variant]]:
    """The agent's variants by field; ``refs`` / ``names`` / ``options`` are ``convert``'s
    checked converters of processor lists, tool names and call options."""
    out: dict[str, list[Variant]] = {}
    for i, m in enumerate(pb.model_variants):
        where = f"{path}.model_variants[{i}]"
        if not m.value:
            raise InvalidArgumentError(f"{where}.value is required (a 'provider/model' string)")
        out.setdefault("model", []).append(Variant(m.value, _rules(m, where)))
    for i, ins in enumerate(pb.instructions_variants):
        where = f"{path}.instructions_variants[{i}]"
        if ins.value and ins.messages:
            raise InvalidArgumentError(f"{where}: set value or messages, not both")
        messages = system_messages_from_proto(ins.messages) if ins.messages else \
            [SystemMessage(ins.value)] if ins.value else []
        if not messages:
            raise InvalidArgumentError(f"{where}.value is required")
        out.setdefault("instructions", []).append(Variant(messages, _rules(ins, where)))
    for i, t in enumerate(pb.tools_variants):
        where = f"{path}.tools_variants[{i}]"
        out.setdefault("tools", []).append(Variant(names(t.value, f"{where}.value"), _rules(t, where)))
    for lane in ("input_processors", "output_processors", "error_processors"):
        for i, p in enumerate(getattr(pb, f"{lane}_variants")):
            where = f"{path}.{lane}_variants[{i}]"
            out.setdefault(lane, []).append(Variant(refs(p.value, f"{where}.value"), _rules(p, where)))
    for i, o in enumerate(pb.default_options_variants):
        where = f"{path}.default_options_variants[{i}]"
        out.setdefault("default_options", []).append(Variant(options(o.value, f"{where}.value"), _rules(o, where)))
    return out


def variants_to_proto(
    agent: a.Agent, out: agent_pb2.Agent, refs_to_proto: Callable[[list[Any], Any], None],
    options_to_proto: Callable[[a.CallOptions, agent_pb2.CallOptions], None],
) -> None:
    for name, variants in agent.variants.items():
        for v in variants:
            target = getattr(out, f"{name}_variants").add()
            if v.rules is not None:
                rule_to_proto(v.rules, target.rules)
            if name == "model":
                target.value = v.value
            elif name == "instructions":
                if len(v.value) == 1 and not v.value[0].provider_options:
                    target.value = v.value[0].content
                else:
                    system_messages_to_proto(v.value, target.messages)
            elif name == "tools":
                target.value.extend(str(t) for t in v.value)
            elif name == "default_options":
                options_to_proto(v.value, target.value)
            else:
                refs_to_proto(v.value, target.value)


def overrides_from_proto(pb: Any, path: str) -> dict[str, Any]:
    """A remote resolver's ``AgentOverrides`` as domain values (checked like an agent's fields)."""
    from .convert import _names, _refs, call_options_from_proto

    out: dict[str, Any] = {}
    if pb.HasField("model"):
        if "/" not in pb.model or pb.model.startswith("/") or pb.model.endswith("/"):
            raise InvalidArgumentError(f"{path}.model {pb.model!r} must be 'provider/model'")
        out["model"] = pb.model
    if pb.HasField("instructions"):
        out["instructions"] = system_messages_from_proto(pb.instructions.messages)
    if pb.HasField("tools"):
        out["tools"] = _names(pb.tools.names, f"{path}.tools.names")
    for lane in ("input_processors", "output_processors", "error_processors"):
        if pb.HasField(lane):
            out[lane] = _refs(getattr(pb, lane).processors, f"{path}.{lane}.processors")
    if pb.HasField("default_options"):
        out["default_options"] = call_options_from_proto(pb.default_options, f"{path}.default_options")
    return out
