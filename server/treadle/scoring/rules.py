"""Rule groups over a flat record: the filter language of scorers (``ScoringFilter``).

A group is ``{"match": "all"|"any", "conditions": [{field, operator, value}], "groups": [...]}``,
nested at most ``MAX_DEPTH`` deep. ``check_group`` validates one (``ValueError`` naming the
first bad part, with its path); ``matches`` evaluates it against a record of dotted field names
(``lookup`` reads ``requestContext.a.b`` out of nested dicts). Self-contained on purpose: the
same language serves per-request variants, and one module can replace the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

MAX_DEPTH = 3

OPERATORS = (
    "equals", "not_equals", "contains", "not_contains", "greater_than", "less_than",
    "greater_than_or_equal", "less_than_or_equal", "in", "not_in", "exists", "not_exists",
)

_MISSING = object()


def check_group(group: Mapping[str, Any], path: str, fields: Callable[[str], bool], depth: int = 1) -> None:
    """``ValueError`` naming the first malformed part of ``group`` (``fields(name)`` says which
    field names are allowed)."""
    if depth > MAX_DEPTH:
        raise ValueError(f"{path}: groups nest at most {MAX_DEPTH} deep")
    match = group.get("match") or "all"
    if match not in ("all", "any"):
        raise ValueError(f"{path}.match must be 'all' or 'any', got {match!r}")
    for i, condition in enumerate(group.get("conditions") or ()):
        where = f"{path}.conditions[{i}]"
        field = condition.get("field") or ""
        if not fields(field):
            raise ValueError(f"{where}.field {field!r} is not a field a filter can read "
                             "(threadId, resourceId or requestContext.<path>)")
        operator = condition.get("operator") or ""
        if operator not in OPERATORS:
            raise ValueError(f"{where}.operator {operator!r} is unknown (one of {', '.join(OPERATORS)})")
        value = condition.get("value", None)
        if operator in ("in", "not_in") and not isinstance(value, list):
            raise ValueError(f"{where}.value must be a list for {operator!r}")
        if operator in ("greater_than", "less_than", "greater_than_or_equal", "less_than_or_equal") and not (
                isinstance(value, (int, float, str)) and not isinstance(value, bool)):
            raise ValueError(f"{where}.value must be a number or a string for {operator!r}")
        if operator not in ("exists", "not_exists") and "value" not in condition:
            raise ValueError(f"{where}.value is required for {operator!r}")
    for i, inner in enumerate(group.get("groups") or ()):
        check_group(inner, f"{path}.groups[{i}]", fields, depth + 1)


def lookup(record: Mapping[str, Any], field: str) -> Any:
    """The value at ``field`` (a dotted path into nested dicts); ``_MISSING`` when absent."""
    if field in record:
        return record[field]
    node: Any = record
    for part in field.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def matches(group: Mapping[str, Any] | None, record: Mapping[str, Any]) -> bool:
    """True when ``record`` satisfies ``group`` (an empty or absent group matches everything)."""
    if not group:
        return True
    results = [_holds(c, record) for c in group.get("conditions") or ()]
    results += [matches(g, record) for g in group.get("groups") or ()]
    if not results:
        return True
    return any(results) if group.get("match") == "any" else all(results)


def _holds(condition: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    actual = lookup(record, condition.get("field") or "")
    operator, expected = condition.get("operator"), condition.get("value")
    if operator == "exists":
        return actual is not _MISSING and actual is not None
    if operator == "not_exists":
        return actual is _MISSING or actual is None
    if operator in ("not_equals", "not_contains", "not_in"):
        positive = {"not_equals": "equals", "not_contains": "contains", "not_in": "in"}[operator]
        return not _holds({**condition, "operator": positive}, record)
    if actual is _MISSING:
        return False
    if operator == "equals":
        return _same(actual, expected)
    if operator == "contains":
        if isinstance(actual, str):
            return isinstance(expected, str) and expected in actual
        if isinstance(actual, list):
            return any(_same(a, expected) for a in actual)
        return False
    if operator == "in":
        return isinstance(expected, list) and any(_same(actual, e) for e in expected)
    return _compare(operator or "", actual, expected)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
        return float(a) == float(b)
    return bool(a == b)


def _compare(operator: str, actual: Any, expected: Any) -> bool:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (actual, expected))
    strings = isinstance(actual, str) and isinstance(expected, str)
    if not (numbers or strings):
        return False  # incomparable values never match (fail closed)
    if operator == "greater_than":
        return bool(actual > expected)
    if operator == "less_than":
        return bool(actual < expected)
    if operator == "greater_than_or_equal":
        return bool(actual >= expected)
    if operator == "less_than_or_equal":
        return bool(actual <= expected)
    return False
