"""Tool payload transforms: what tool payloads look like outside the run (the Mastra Agent's
``hooks.transform`` and a tool's ``transform``), as declarative rules.

Two targets: ``display`` (what ``Stream``, ``Generate`` and thread subscribers see) and
``transcript`` (what ``ListMessages`` returns). Four phases: ``input-delta`` (argument text as it
streams), ``input`` (the call's arguments), ``output`` (the tool's result), ``error`` (its error
message). The model, the tool and the store always get the raw payload; this module only computes
projections, and the edges choose raw or projected per caller.

Fail closed: a projection that cannot be computed gives ``{"message": "Tool <phase> payload
unavailable"}``; a tool with a transform for a target streams no raw argument deltas to it unless a
rule for ``input-delta`` exists, and its error messages lose every raw argument value.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Final

from .errors import InvalidArgumentError

PHASES: Final = ("input-delta", "input", "output", "error")
TARGETS: Final = ("display", "transcript")
DEFAULT_MASK: Final = "***"
SCRUBBED: Final = "[redacted]"
MIN_SCRUB_LENGTH: Final = 3
"""Argument values shorter than this are not scrubbed from error text (``1`` would redact every
digit of a message); a secret is longer."""


class Suppressed:
    """The payload is not shown: a display chunk that carries it is not sent."""

    def __repr__(self) -> str:
        return "SUPPRESSED"


SUPPRESSED: Final = Suppressed()
_UNSET: Final = object()
_ATOMIC: Final = (str, int, float, bool, type(None))


def placeholder(phase: str) -> dict[str, str]:
    """What a client sees when a transform failed or yielded nothing (fail closed)."""
    return {"message": f"Tool {phase} payload unavailable"}


@dataclass(frozen=True)
class ToolPayloadRule:
    """One declarative projection; ``tools`` and ``targets`` empty mean every tool and both."""

    phase: str
    tools: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    mask: tuple[str, ...] = ()
    mask_with: str = ""
    replace: Any = _UNSET
    suppress: bool = False

    @property
    def replaces(self) -> bool:
        return self.replace is not _UNSET

    def matches(self, tool_name: str, target: str) -> bool:
        if self.targets and target not in self.targets:
            return False
        return not self.tools or any(fnmatchcase(tool_name, p) for p in self.tools)

    def apply(self, value: Any) -> Any:
        """The projected value, ``SUPPRESSED``, or an exception (the caller fails closed)."""
        if self.suppress:
            return SUPPRESSED
        if self.replaces:
            replace = self.replace
            return replace if isinstance(replace, _ATOMIC) else copy.deepcopy(replace)
        if not isinstance(value, (dict, list)):
            raise TypeError("JSON pointer rules need an object or array payload")
        out = copy.deepcopy(value)
        for pointer in self.drop:
            _drop(out, parse_pointer(pointer))
        for pointer in self.mask:
            _mask(out, parse_pointer(pointer), self.mask_with or DEFAULT_MASK)
        return out


def check_rules(rules: list[ToolPayloadRule], path: str) -> None:
    """``InvalidArgumentError`` naming the first malformed field of ``rules`` (at ``path``)."""
    for i, rule in enumerate(rules):
        where = f"{path}[{i}]"
        if rule.phase not in PHASES:
            raise InvalidArgumentError(
                f"{where}.phase: {rule.phase!r} is not a phase; use one of {', '.join(PHASES)}")
        for j, target in enumerate(rule.targets):
            if target not in TARGETS:
                raise InvalidArgumentError(
                    f"{where}.targets[{j}]: {target!r} is not a target; use display or transcript")
        for j, tool in enumerate(rule.tools):
            if not tool:
                raise InvalidArgumentError(f"{where}.tools[{j}] is empty; name a tool or a glob")
        actions = sum((bool(rule.drop or rule.mask), rule.replaces, rule.suppress))
        if actions == 0:
            raise InvalidArgumentError(f"{where}: the rule does nothing; set drop, mask, replace or suppress")
        if actions > 1:
            raise InvalidArgumentError(
                f"{where}: set one of drop/mask, replace or suppress (they cannot combine)")
        if (rule.drop or rule.mask) and rule.phase in ("input-delta", "error"):
            kind = "drop" if rule.drop else "mask"
            raise InvalidArgumentError(
                f"{where}.{kind}: JSON pointers do not apply to the {rule.phase} phase (its payload is "
                "text); use replace or suppress")
        if rule.replaces and rule.phase == "input-delta" and not isinstance(rule.replace, str):
            raise InvalidArgumentError(f"{where}.replace: an input-delta replacement must be a string")
        for kind in ("drop", "mask"):
            for j, pointer in enumerate(getattr(rule, kind)):
                try:
                    tokens = parse_pointer(pointer)
                except ValueError as e:
                    raise InvalidArgumentError(f"{where}.{kind}[{j}]: {e}") from None
                if not tokens:
                    raise InvalidArgumentError(
                        f"{where}.{kind}[{j}]: the pointer \"\" names the whole payload; use replace or "
                        "suppress for that")


_ESCAPE = re.compile(r"~(?![01])")


def parse_pointer(pointer: str) -> list[str]:
    """An RFC 6901 JSON pointer's reference tokens; ``ValueError`` when it is not one."""
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise ValueError(f"{pointer!r} is not a JSON pointer: it must start with '/' (e.g. /ssn)")
    if _ESCAPE.search(pointer):
        raise ValueError(f"{pointer!r} is not a JSON pointer: '~' must be followed by 0 or 1")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _parent(doc: Any, tokens: list[str]) -> tuple[Any, Any] | None:
    """The container of the pointed-at value and its key, or None when it names nothing."""
    node = doc
    for token in tokens[:-1]:
        node = _child(node, token)
        if node is _UNSET:
            return None
    last = tokens[-1]
    if isinstance(node, dict):
        return (node, last) if last in node else None
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        return node, int(last)
    return None


def _child(node: Any, token: str) -> Any:
    if isinstance(node, dict):
        return node.get(token, _UNSET)
    if isinstance(node, list) and token.isdigit() and int(token) < len(node):
        return node[int(token)]
    return _UNSET


def _drop(doc: Any, tokens: list[str]) -> None:
    found = _parent(doc, tokens)
    if found is not None:
        container, key = found
        del container[key]


def _mask(doc: Any, tokens: list[str], text: str) -> None:
    found = _parent(doc, tokens)
    if found is not None:
        container, key = found
        container[key] = text


def scrub(text: str, args: Any) -> str:
    """``text`` without any raw argument value in it (string and number leaves, and the
    arguments' JSON), each replaced by ``[redacted]``."""
    needles = {json.dumps(args, ensure_ascii=False)} if args is not None else set()
    if isinstance(args, str):
        needles.add(args)
    _leaves(args, needles)
    for needle in sorted((n for n in needles if len(n) >= MIN_SCRUB_LENGTH), key=len, reverse=True):
        text = text.replace(needle, SCRUBBED)
    return text


def _leaves(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        for v in value.values():
            _leaves(v, out)
    elif isinstance(value, list):
        for v in value:
            _leaves(v, out)
    elif isinstance(value, str):
        out.add(value)
        out.add(json.dumps(value, ensure_ascii=False)[1:-1])  # as an error that printed JSON shows it
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        out.add(str(value))


@dataclass
class ToolPayloadPolicy:
    """An agent's rules, indexed per tool and target on first use."""

    rules: list[ToolPayloadRule] = field(default_factory=list)
    _by_tool: dict[tuple[str, str], dict[str, list[ToolPayloadRule]]] = field(
        default_factory=dict, repr=False, compare=False)

    def __bool__(self) -> bool:
        return bool(self.rules)

    def phases(self, tool_name: str, target: str) -> dict[str, list[ToolPayloadRule]] | None:
        """The rules of ``tool_name`` for ``target``, by phase; None when it has no transform."""
        key = (tool_name, target)
        found = self._by_tool.get(key)
        if found is None:
            found = {}
            for rule in self.rules:
                if rule.matches(tool_name, target):
                    found.setdefault(rule.phase, []).append(rule)
            self._by_tool[key] = found
        return found or None

    def has_transform(self, tool_name: str, target: str) -> bool:
        return self.phases(tool_name, target) is not None

    def project(self, target: str, phase: str, tool_name: str, value: Any, args: Any = None) -> Any:
        """``value`` as ``target`` shows it in ``phase`` (``args``: the raw arguments, for scrubbing
        errors); ``SUPPRESSED`` when it is not shown. Never raises: a failure is the placeholder."""
        phases = self.phases(tool_name, target)
        if phases is None:
            return value
        rules = phases.get(phase)
        if phase == "input-delta":
            if not rules:
                return SUPPRESSED  # partial raw JSON never streams past a transform
        try:
            out = value
            if phase == "error":
                out = scrub(str(value), args)
            for rule in rules or ():
                out = rule.apply(out)
                if out is SUPPRESSED:
                    return SUPPRESSED
        except Exception:  # noqa: BLE001 - fail closed, whatever went wrong
            return failed(phase)
        if out is None and value is not None and rules:
            return failed(phase)  # a transform that yields nothing
        return out


def failed(phase: str) -> Any:
    """The placeholder for ``phase``: the message object, or its text for text payloads."""
    message = placeholder(phase)
    return message["message"] if phase in ("input-delta", "error") else message
