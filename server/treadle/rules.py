"""Rules over a request context: the one condition language of per-request variants and of
scorer filters.

A rule is a condition ``{field, operator, value}`` or a group ``{operator: AND|OR, conditions}``
of conditions and further groups, nested at most ``MAX_DEPTH`` deep. ``field`` is a key of the
context; a dotted name reads nested objects (``org.plan``), and a key that itself contains dots
wins over the path. ``rule_from_dict`` parses and checks a rule's JSON form; ``matches`` (or a
rule's cached ``test`` predicate, compiled once per rule) evaluates it.

Values compare as the JSON they came from: numbers as numbers (``3``, ``3.0`` and the string
``"3"`` against a number are equal, since Struct numbers are all doubles), two strings as
strings; values that cannot be compared never match. A field missing from the context fails
every operator except ``not_exists`` and the negative ``not_*`` operators.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .core.errors import InvalidArgumentError

CONDITION_OPERATORS = (
    "equals", "not_equals", "contains", "not_contains", "greater_than", "less_than",
    "greater_than_or_equal", "less_than_or_equal", "in", "not_in", "exists", "not_exists",
)
GROUP_OPERATORS = ("AND", "OR")
MAX_DEPTH = 3
"""Groups nest at most this deep (the top group is depth 1)."""


@dataclass(frozen=True)
class Rule:
    """A condition (``field`` set) or a group (``AND`` / ``OR`` over ``conditions``)."""

    field: str = ""
    operator: str = ""
    value: Any = None
    conditions: tuple[Rule, ...] = ()

    @property
    def is_group(self) -> bool:
        return not self.field

    @functools.cached_property
    def test(self) -> Callable[[Mapping[str, Any]], bool]:
        """The rule compiled to a predicate over a request context (built once per rule)."""
        return _compile(self)



def rule_from_dict(data: Any, path: str, depth: int = 1) -> Rule:
    """A checked ``Rule`` from its JSON form; ``InvalidArgumentError`` naming ``path``."""
    if not isinstance(data, Mapping):
        raise InvalidArgumentError(f"{path} must be an object, got {type(data).__name__}")
    unknown = sorted(set(data) - {"field", "operator", "value", "conditions"})
    if unknown:
        raise InvalidArgumentError(f"{path} has unknown keys {unknown}")
    conditions = data.get("conditions") or []
    return check_rule(Rule(
        field=str(data.get("field") or ""), operator=str(data.get("operator") or ""),
        value=data.get("value"),
        conditions=tuple(rule_from_dict(c, f"{path}.conditions[{i}]", depth + 1) for i, c in enumerate(conditions))
        if isinstance(conditions, list) else (),
    ), path, depth)


def check_rule(rule: Rule, path: str, depth: int = 1) -> Rule:
    """``rule`` itself, after checking its operators and depth (``InvalidArgumentError``)."""
    if rule.is_group:
        if depth > MAX_DEPTH:
            raise InvalidArgumentError(f"{path}: rule groups nest at most {MAX_DEPTH} deep")
        if rule.operator.upper() not in GROUP_OPERATORS:
            raise InvalidArgumentError(
                f"{path}.operator {rule.operator!r} is not a group operator: use AND or OR "
                "(a condition needs a field)")
        if not rule.conditions:
            raise InvalidArgumentError(f"{path}.conditions is empty: a group needs at least one condition")
        for i, c in enumerate(rule.conditions):
            check_rule(c, f"{path}.conditions[{i}]", depth + 1)
        return rule
    if rule.operator not in CONDITION_OPERATORS:
        raise InvalidArgumentError(
            f"{path}.operator {rule.operator!r} is unknown: use one of {', '.join(CONDITION_OPERATORS)}")
    if rule.conditions:
        raise InvalidArgumentError(f"{path}: a condition (with a field) has no conditions")
    if rule.operator in ("in", "not_in") and not isinstance(rule.value, list):
        raise InvalidArgumentError(f"{path}.value must be a list for {rule.operator!r}")
    return rule


_MISSING = object()


def _lookup(context: Mapping[str, Any], name: str) -> Any:
    if name in context:
        return context[name]
    here: Any = context
    for part in name.split("."):
        if not isinstance(here, Mapping) or part not in here:
            return _MISSING
        here = here[part]
    return here


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


def _same(a: Any, b: Any) -> bool:
    if a == b:
        return True
    x, y = _number(a), _number(b)  # 3 and 3.0 and "3" (JSON Struct numbers are all doubles)
    return x is not None and y is not None and x == y and not (isinstance(a, str) and isinstance(b, str))


def _compare(op: str, have: Any, want: Any) -> bool:
    x, y = _number(have), _number(want)
    if x is None or y is None:
        if not (isinstance(have, str) and isinstance(want, str)):
            return False
        x, y = have, want  # type: ignore[assignment]
    match op:
        case "greater_than":
            return x > y  # type: ignore[operator]
        case "less_than":
            return x < y  # type: ignore[operator]
        case "greater_than_or_equal":
            return x >= y  # type: ignore[operator]
        case _:
            return x <= y  # type: ignore[operator]


def _contains(have: Any, want: Any) -> bool:
    if isinstance(have, str):
        return isinstance(want, str) and want in have
    if isinstance(have, list):
        return any(_same(h, want) for h in have)
    if isinstance(have, Mapping):
        return isinstance(want, str) and want in have
    return False


def matches(rule: Rule | None, context: Mapping[str, Any]) -> bool:
    """Whether ``rule`` holds for ``context``; a missing field fails every operator but
    ``not_exists`` (and the negative ``not_*`` operators, which hold)."""
    return True if rule is None else rule.test(context)


def _compile(rule: Rule) -> Callable[[Mapping[str, Any]], bool]:
    if rule.is_group:
        preds = tuple(c.test for c in rule.conditions)
        if rule.operator.upper() == "AND":
            def every(context: Mapping[str, Any]) -> bool:
                for p in preds:
                    if not p(context):
                        return False
                return True
            return every

        def some(context: Mapping[str, Any]) -> bool:
            for p in preds:
                if p(context):
                    return True
            return False
        return some
    name, op, want = rule.field, rule.operator, rule.value
    if op == "exists":
        return lambda context: _lookup(context, name) not in (_MISSING, None)
    if op == "not_exists":
        return lambda context: _lookup(context, name) in (_MISSING, None)
    missing = op in ("not_equals", "not_contains", "not_in")
    if op in ("equals", "not_equals") and isinstance(want, str):
        negate = op == "not_equals"

        def text(context: Mapping[str, Any]) -> bool:  # the common case: one string
            have = _lookup(context, name)
            if have is _MISSING:
                return missing
            return (have == want or (not isinstance(have, str) and _same(have, want))) != negate
        return text

    def condition(context: Mapping[str, Any]) -> bool:
        have = _lookup(context, name)
        return missing if have is _MISSING else _holds(op, have, want)
    return condition


def _holds(op: str, have: Any, want: Any) -> bool:
    match op:
        case "equals":
            return _same(have, want)
        case "not_equals":
            return not _same(have, want)
        case "contains":
            return _contains(have, want)
        case "not_contains":
            return not _contains(have, want)
        case "in":
            return any(_same(have, w) for w in want)
        case "not_in":
            return not any(_same(have, w) for w in want)
        case _:
            return _compare(op, have, want)
