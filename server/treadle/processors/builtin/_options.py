"""One place where built-in processors' options are checked: a frozen dataclass per built-in,
read from the camelCase JSON form (``{"strategy": "block", "maxTokens": 2000}``).

``parse_options`` accepts camelCase or snake_case keys, checks each value against its field's
annotation (``str``, ``int``, ``float``, ``bool``, ``list[str]``, ``Literal[...]``, ``X | None``)
and then the dataclass's own ``__post_init__`` checks; every failure is a ``ValueError`` that
names the option.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def parse_options(cls: type[T], data: Mapping[str, Any] | None) -> T:
    """``cls`` built from ``data``; ``ValueError`` naming the first bad option."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ValueError(f"options must be an object, got {type(data).__name__}")
    assert dataclasses.is_dataclass(cls)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = _snake(key)
        if name not in fields:
            known = ", ".join(camel(n) for n in fields) or "none"
            raise ValueError(f"unknown option {key!r} (options: {known})")
        values[name] = _check(camel(name), hints[name], value)
    try:
        return cls(**values)
    except (TypeError, ValueError) as e:
        raise ValueError(str(e)) from None


def _check(name: str, hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        members = typing.get_args(hint)
        if value is None and type(None) in members:
            return None
        errors = []
        for member in members:
            if member is type(None):
                continue
            try:
                return _check(name, member, value)
            except ValueError as e:
                errors.append(str(e))
        raise ValueError(errors[0] if errors else f"option {name!r} is malformed")
    if origin is typing.Literal:
        choices = typing.get_args(hint)
        if value not in choices:
            raise ValueError(f"option {name!r} must be one of {', '.join(map(repr, choices))}, got {value!r}")
        return value
    if origin in (list, tuple):
        (item,) = typing.get_args(hint)[:1]
        if not isinstance(value, list):
            raise ValueError(f"option {name!r} must be a list, got {type(value).__name__}")
        return tuple(_check(f"{name}[{i}]", item, v) for i, v in enumerate(value))
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"option {name!r} must be true or false, got {value!r}")
        return value
    if hint is int:
        # JSON numbers arrive as floats from a protobuf Struct: 3.0 is 3.
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            raise ValueError(f"option {name!r} must be a whole number, got {value!r}")
        return int(value)
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"option {name!r} must be a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"option {name!r} must be a string, got {value!r}")
        return value
    if hint is Any:
        return value
    raise ValueError(f"option {name!r} has an unsupported type")  # pragma: no cover


def require(condition: bool, message: str) -> None:
    """For ``__post_init__`` checks."""
    if not condition:
        raise ValueError(message)
