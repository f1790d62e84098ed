"""The filter of scorers (``ScoringFilter``): the scorers' own form of a rule group.

A filter is ``{"match": "all"|"any", "conditions": [{field, operator, value}], "groups": [...]}``
over a run's record (``threadId``, ``resourceId``, ``requestContext.<path>``), nested at most
``MAX_DEPTH`` deep. ``check_group`` validates one (``ValueError`` naming the first bad part, with
its path); ``matches`` evaluates it. Evaluation is ``treadle.rules``, the language per-request
variants use: a filter is turned into one of its rules (``to_rule``), so the operators mean the
same in both places.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

from ..rules import CONDITION_OPERATORS as OPERATORS
from ..rules import MAX_DEPTH, Rule


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


def to_rule(group: Mapping[str, Any]) -> Rule | None:
    """``group`` as a rule of ``treadle.rules``; None when it holds for every record (no
    conditions, or an ``any`` over a part that always holds)."""
    parts = [Rule(str(c.get("field") or ""), str(c.get("operator") or ""), c.get("value"))
             for c in group.get("conditions") or ()]
    anyof = group.get("match") == "any"
    for inner in group.get("groups") or ():
        rule = to_rule(inner)
        if rule is None:
            if anyof:
                return None
            continue
        parts.append(rule)
    if not parts:
        return None
    return Rule(operator="OR" if anyof else "AND", conditions=tuple(parts))


@functools.lru_cache(maxsize=256)
def _compiled(key: str) -> Rule | None:
    return to_rule(json.loads(key))


def matches(group: Mapping[str, Any] | None, record: Mapping[str, Any]) -> bool:
    """True when ``record`` satisfies ``group`` (an empty or absent group matches everything)."""
    if not group:
        return True
    rule = _compiled(json.dumps(group, sort_keys=True))
    return rule is None or rule.test(record)
