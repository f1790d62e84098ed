"""What hooks may return, besides ``None`` (no change), the same ``MessageList`` (edited in
place) and a ``list[Message]`` (applied as a diff by id).

An empty list means *no change*: delete messages with ``message_list.remove_by_ids``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .chunks import Chunk
from .message_list import MessageList
from .messages import Message, Prompt, SystemMessage


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()


@dataclass
class MessagesResult:
    """``{messages, systemMessages}``: ``system_messages`` replaces the untagged system bucket."""

    messages: list[Message] | None = None
    system_messages: list[SystemMessage] | None = None


@dataclass
class ProcessInputStepResult:
    """Overrides for this step only; fields left ``UNSET`` keep the previous processor's value.

    A plain ``dict`` with these keys is accepted too (``{"model": "openai/gpt-5-mini"}``).
    """

    model: Any = UNSET
    tool_choice: Any = UNSET
    active_tools: Any = UNSET
    tools: Any = UNSET
    messages: Any = UNSET
    system_messages: Any = UNSET
    provider_options: Any = UNSET
    model_settings: Any = UNSET
    structured_output: Any = UNSET

    def set_fields(self) -> dict[str, Any]:
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not UNSET}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ProcessInputStepResult:
        aliases = {
            "toolChoice": "tool_choice",
            "activeTools": "active_tools",
            "systemMessages": "system_messages",
            "providerOptions": "provider_options",
            "modelSettings": "model_settings",
            "structuredOutput": "structured_output",
        }
        names = {f.name for f in fields(cls)}
        out = cls()
        for key, value in data.items():
            name = aliases.get(key, key)
            if name not in names:
                raise ValueError(f"processInputStep returned unknown key {key!r}")
            setattr(out, name, value)
        return out


@dataclass
class ProcessLLMRequestResult:
    """Replace this call's prompt (never persisted) and/or replay a cached response."""

    prompt: Prompt | None = None
    response: list[Chunk] | None = None


@dataclass
class ProcessAPIErrorResult:
    retry: bool = False


# --- return values -> results: one set of rules for the chain runner and the processor SDK ------

_MESSAGE_KEYS = frozenset({"messages", "system_messages", "systemMessages"})


def apply_messages_returned(returned: Any, message_list: MessageList, shown: list[Message]) -> None:
    """Apply what a message hook returned to ``message_list``; ``shown`` is the view the hook
    was given (messages of it missing from a returned list are removed).

    ``None`` and ``message_list`` itself (edited in place) change nothing. Raises ``ValueError``
    saying what is wrong with any other value that is not a list, mapping or ``MessagesResult``.
    """
    if returned is None or returned is message_list:
        return
    if isinstance(returned, MessageList):
        raise ValueError("returned a different MessageList; edit and return the one it was given")
    if isinstance(returned, Mapping):
        returned = MessagesResult(returned.get("messages"),
                                  returned.get("system_messages", returned.get("systemMessages")))
    elif isinstance(returned, list):
        returned = MessagesResult(messages=returned)
    if not isinstance(returned, MessagesResult):
        raise ValueError(f"returned an unsupported {type(returned).__name__}")
    if returned.messages:  # an empty array means "no change"
        bad = [m for m in returned.messages if not isinstance(m, Message)]
        if bad:
            raise ValueError(f"returned a list holding {type(bad[0]).__name__}, expected Message")
        message_list.apply_diff(returned.messages, shown)
    if returned.system_messages is not None:
        message_list.replace_all_system_messages(
            [m if isinstance(m, SystemMessage) else SystemMessage(str(m)) for m in returned.system_messages]
        )


def as_input_step_result(returned: Any) -> Any:
    """A mapping with step keys as ``ProcessInputStepResult`` (a mapping of only message keys is
    a message result); anything else as it is."""
    if isinstance(returned, Mapping) and not _MESSAGE_KEYS >= returned.keys():
        return ProcessInputStepResult.from_dict(dict(returned))
    return returned


def as_llm_request_result(returned: Any) -> ProcessLLMRequestResult | None:
    """``processLLMRequest``'s return value; ``ValueError`` for an unsupported one."""
    if returned is None:
        return None
    if isinstance(returned, Mapping):
        returned = ProcessLLMRequestResult(returned.get("prompt"), returned.get("response"))
    if not isinstance(returned, ProcessLLMRequestResult):
        raise ValueError(f"returned an unsupported {type(returned).__name__}")
    return returned


def wants_retry(returned: Any) -> bool:
    """Whether ``processAPIError`` asked to retry the call."""
    if isinstance(returned, Mapping):
        return bool(returned.get("retry"))
    return isinstance(returned, ProcessAPIErrorResult) and returned.retry
