"""Per-request agents: variants with rules over the call's request context, resolved once per
call into a frozen snapshot of the agent.

The Mastra framework lets an agent's ``model``, ``instructions``, ``tools``, processors and
``defaultOptions`` be functions of the request context. Functions cannot cross the wire, so an
agent from a config file or the API lists *variants* ``{value, rules}`` instead; a Python code
agent may also give a real callable (``model=lambda ctx: ...``, sync or async). Resolution:

1. callables are called with the request context (their result is the field's plain value);
2. variants apply: a scalar field (``model``, ``instructions``) takes the value of the first
   matching variant (a rule-less one always matches, so placed last it is the fallback) and keeps
   its plain value when none matches; a list field is its plain list followed by the value of
   every matching variant; ``default_options`` is merged over by every match, later wins;
3. the agent's ``resolver`` (a processor serving ``resolveAgent``) may override any of them.

The snapshot is a copy of the agent with the variants cleared; ``Resolution`` says what it
resolved, for the run record and the run's span.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .core.errors import InvalidArgumentError
from .core.messages import SystemMessage
from .rules import (
    Rule,
    matches,
)

SCALAR_FIELDS = ("model", "instructions")
LIST_FIELDS = ["tools", "input_processors", "output_processors", "error_processors"]
"""List-valued fields: every matching variant is added. A field another part of the agent adds
(sub-agents, scorers) joins by appending its name here and giving ``Agent`` the attribute."""
OBJECT_FIELDS = ("default_options",)


def variant_fields() -> tuple[str, ...]:
    return (*SCALAR_FIELDS, *LIST_FIELDS, *OBJECT_FIELDS)


@dataclass(frozen=True)
class Variant:
    value: Any
    rules: Rule | None = None
    """None: the variant always applies."""


@dataclass(frozen=True)
class Resolution:
    """What one call resolved: recorded on its run and its span."""

    model: str
    matched: tuple[tuple[str, int], ...] = ()
    """(field, index in that field's variant list) of every variant that applied, in order."""
    overrides: tuple[str, ...] = ()
    """Fields the resolver (remote or Python) overrode."""
    resolver: str = ""
    """The id of the processor (or the name of the function) that ran ``resolveAgent``."""
    seconds: float = 0.0
    """How long the resolution took (functions and resolver included)."""

    def detail(self) -> dict[str, Any]:
        return {"model": self.model, "matched": [list(m) for m in self.matched],
                "overrides": list(self.overrides)}


# --- resolution -------------------------------------------------------------------------------


ResolverCall = Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Runs the agent's resolver on the declaratively resolved agent: the overrides, or None."""


def has_dynamic_fields(agent: Any) -> bool:
    """True when ``agent`` needs resolving (variants, callables or a resolver)."""
    if any(agent.variants.values()) or agent.resolver is not None:
        return True
    return any(_is_callable(getattr(agent, f)) for f in variant_fields())


def _is_callable(value: Any) -> bool:
    return callable(value) and not isinstance(value, (str, list, tuple, dict, SystemMessage)) \
        and not hasattr(value, "__dataclass_fields__")


def resolve_declarative(agent: Any, context: Mapping[str, Any]) -> tuple[Any, list[tuple[str, int]]]:
    """A copy of ``agent`` with its variants applied (callables left as they are) and the
    variants that matched. Cheap: what ``plan`` uses on its own."""
    out = copy.copy(agent)
    out.variants = {}
    matched: list[tuple[str, int]] = []
    for name, variants in agent.variants.items():
        if not variants:
            continue
        if name in SCALAR_FIELDS:
            for i, v in enumerate(variants):
                if matches(v.rules, context):
                    setattr(out, name, copy.copy(v.value) if isinstance(v.value, list) else v.value)
                    matched.append((name, i))
                    break
        elif name in OBJECT_FIELDS:
            merged = getattr(agent, name)
            for i, v in enumerate(variants):
                if matches(v.rules, context):
                    merged = v.value.merged_over(merged)
                    matched.append((name, i))
            setattr(out, name, merged)
        else:
            values = list(getattr(agent, name))
            for i, v in enumerate(variants):
                if matches(v.rules, context):
                    values.extend(v.value)
                    matched.append((name, i))
            if name == "tools":
                values = _unique_tools(values)
            setattr(out, name, values)
    return out, matched


def _unique_tools(tools: Sequence[Any]) -> list[Any]:
    seen: set[str] = set()
    out = []
    for t in tools:
        name = t if isinstance(t, str) else getattr(t, "name", str(t))
        if name not in seen:
            seen.add(name)
            out.append(t)
    return out


async def _call(fn: Callable[..., Any], context: dict[str, Any]) -> Any:
    result = fn(context)
    return await result if inspect.isawaitable(result) else result


async def resolve(
    agent: Any, context: dict[str, Any], resolver: ResolverCall | None = None,
) -> tuple[Any, Resolution]:
    """The frozen snapshot of ``agent`` for one call over ``context``, and what it resolved."""
    base = agent
    called = [f for f in variant_fields() if _is_callable(getattr(agent, f))]
    if called:
        base = copy.copy(agent)
        for name in called:
            try:
                value = await _call(getattr(agent, name), dict(context))
            except InvalidArgumentError:
                raise
            except Exception as e:
                raise InvalidArgumentError(f"agent {agent.id!r}: {name}: its function failed: {e}") from e
            setattr(base, name, normalise(name, value, agent.id))
    out, matched = resolve_declarative(base, context)
    overrides: list[str] = list(called)
    if agent.resolver is not None and resolver is not None:
        changes = await resolver(out, dict(context))
        for name, value in (changes or {}).items():
            if name == "default_options":
                value = value.merged_over(out.default_options) if value is not None else out.default_options
            setattr(out, name, value)
            overrides.append(name)
    out.resolver = None
    return out, Resolution(model=out.model if isinstance(out.model, str) else "",
                           matched=tuple(matched), overrides=tuple(overrides))


def normalise(name: str, value: Any, agent_id: str) -> Any:
    """A callable's result in the field's plain form (instructions: system messages)."""
    if name == "model":
        if not isinstance(value, str):
            raise InvalidArgumentError(f"agent {agent_id!r}: model: its function returned "
                                       f"{type(value).__name__}, not a 'provider/model' string")
        return value
    if name == "instructions":
        if value is None:
            return []
        if isinstance(value, str):
            return [SystemMessage(value)] if value else []
        if isinstance(value, SystemMessage):
            return [value]
        return [SystemMessage(v) if isinstance(v, str) else v for v in value]
    if name in LIST_FIELDS:
        return list(value or [])
    return value


def check_resolved(agent: Any, options: Any, had_instructions: bool) -> None:
    """An empty field the call needs is an error naming it."""
    if not agent.model:
        raise InvalidArgumentError(
            f"agent {agent.id!r}: model: no variant matched the request context and the agent has no "
            "default model (add a variant without rules as the fallback)")
    if "/" not in agent.model or agent.model.startswith("/") or agent.model.endswith("/"):
        raise InvalidArgumentError(
            f"agent {agent.id!r}: model: resolved to {agent.model!r}, which is not 'provider/model'")
    if had_instructions and not agent.instructions:
        raise InvalidArgumentError(
            f"agent {agent.id!r}: instructions: no variant matched the request context and the agent "
            "has no default instructions")
    choice = getattr(options, "tool_choice", None) if options is not None else None
    if (choice == "required" or isinstance(choice, dict)) and not agent.tools:
        raise InvalidArgumentError(
            f"agent {agent.id!r}: tools: the call requires a tool (tool_choice {choice!r}) but no tool "
            "was resolved for this request context")

