"""What the Chat Completions API refuses, checked on every request the OpenAI fake receives.

``validate(body)`` returns the ``HttpError`` (400, ``invalid_request_error``, with the ``param``
the API names and its message text) that the real API answers for the first problem found, or
None. The points checked are those a client can get wrong: required fields, message roles and
their content types, every ``tool`` message answering a ``tool_calls`` id of the assistant
message before it (and every such id answered), tool schemas and ``tool_choice``.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema

from .script import HttpError

_ROLES = ("system", "developer", "user", "assistant", "tool")
_USER_PARTS = ("text", "image_url", "input_audio", "file")
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _bad(message: str, param: str | None = None) -> HttpError:
    return HttpError(400, message, type="invalid_request_error", param=param)


def validate(body: dict[str, Any]) -> HttpError | None:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return _bad("you must provide a model parameter", "model")
    messages = body.get("messages")
    if not isinstance(messages, list):
        return _bad("Missing required parameter: 'messages'.", "messages")
    if not messages:
        return _bad("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                    "empty array instead.", "messages")
    return _messages(messages) or _tools(body)


def _messages(messages: list[Any]) -> HttpError | None:
    calls: set[str] | None = None  # the tool_calls ids of the assistant message before
    unanswered: list[str] = []
    calls_at = 0
    for i, m in enumerate(messages):
        at = f"messages.[{i}]"
        role = m.get("role") if isinstance(m, dict) else None
        if role not in _ROLES:
            return _bad(f"Invalid value: '{role}'. Supported values are: 'system', 'assistant', 'user', "
                        "'function', 'tool', and 'developer'.", f"{at}.role")
        if role == "tool":
            if calls is None:
                return _bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                            "message with 'tool_calls'.", f"{at}.role")
            call_id = m.get("tool_call_id")
            if not isinstance(call_id, str):
                return _bad(f"Missing required parameter: '{at}.tool_call_id'.", f"{at}.tool_call_id")
            if call_id not in calls:
                return _bad(f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
                            "previous message.", f"{at}.tool_call_id")
            if call_id in unanswered:
                unanswered.remove(call_id)
            if problem := _text_content(m.get("content"), at, required=True):
                return problem
            continue
        if unanswered:
            return _unanswered(unanswered, calls_at)
        calls = None
        problem = _content(role, m, at)
        if problem is not None:
            return problem
        if role == "assistant" and m.get("tool_calls"):
            calls, calls_at = set(), i
            for k, call in enumerate(m["tool_calls"]):
                where = f"{at}.tool_calls.[{k}]"
                function = call.get("function") if isinstance(call, dict) else None
                if not isinstance(call.get("id"), str) or not call["id"]:
                    return _bad(f"Missing required parameter: '{where}.id'.", f"{where}.id")
                if call.get("type") != "function" or not isinstance(function, dict):
                    return _bad(f"Missing required parameter: '{where}.function'.", f"{where}.function")
                if not isinstance(function.get("name"), str) or not isinstance(function.get("arguments"), str):
                    return _bad(f"Missing required parameter: '{where}.function.arguments'.",
                                f"{where}.function.arguments")
                calls.add(call["id"])
                unanswered.append(call["id"])
    if unanswered:
        return _unanswered(unanswered, calls_at)
    return None


def _unanswered(ids: list[str], at: int) -> HttpError:
    return _bad("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}",
                f"messages.[{at}].role")


def _content(role: str, m: dict[str, Any], at: str) -> HttpError | None:
    content = m.get("content")
    if role == "assistant":
        if content is None:
            if m.get("tool_calls"):
                return None
            return _bad("Invalid value for 'content': expected a string, got null.", f"{at}.content")
        return _text_content(content, at, required=False, allowed=("text", "refusal"))
    if role == "user" and isinstance(content, list):
        for k, part in enumerate(content):
            kind = part.get("type") if isinstance(part, dict) else None
            if kind not in _USER_PARTS:
                return _bad(f"Invalid value: '{kind}'. Supported values are: 'text', 'image_url', 'input_audio', "
                            "'refusal', and 'file'.", f"{at}.content.[{k}].type")
            if kind not in part:
                return _bad(f"Missing required parameter: '{at}.content.[{k}].{kind}'.", f"{at}.content.[{k}].{kind}")
        return None
    return _text_content(content, at, required=True)


def _text_content(content: Any, at: str, *, required: bool, allowed: tuple[str, ...] = ("text",)) -> HttpError | None:
    if isinstance(content, str):
        return None
    if content is None:
        if required:
            return _bad(f"Missing required parameter: '{at}.content'.", f"{at}.content")
        return None
    if not isinstance(content, list):
        return _bad(f"Invalid type for '{at}.content': expected one of a string or array of objects, but got "
                    f"{type(content).__name__} instead.", f"{at}.content")
    for k, part in enumerate(content):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            names = ", ".join(f"'{a}'" for a in allowed)
            return _bad(f"Invalid value: '{kind}'. Supported values are: {names}.", f"{at}.content.[{k}].type")
    return None


def _tools(body: dict[str, Any]) -> HttpError | None:
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if tools is None:
        if choice is not None:
            return _bad("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
                        "specified.", "tool_choice")
        return None
    if not isinstance(tools, list) or not tools:
        return _bad("Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty "
                    "array instead.", "tools")
    names = []
    for k, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict):
            return _bad(f"Missing required parameter: 'tools[{k}].function'.", f"tools[{k}].function")
        name = function.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            return _bad(f"Invalid 'tools[{k}].function.name': string does not match pattern. Expected a string "
                        "that matches the pattern '^[a-zA-Z0-9_-]+$'.", f"tools[{k}].function.name")
        names.append(name)
        schema = function.get("parameters")
        if schema is None:
            continue
        if not isinstance(schema, dict):
            return _bad(f"Invalid type for 'tools[{k}].function.parameters': expected an object, but got "
                        f"{type(schema).__name__} instead.", f"tools[{k}].function.parameters")
        if schema.get("type") != "object":
            return _bad(f"Invalid schema for function '{name}': schema must be a JSON Schema of 'type: \"object\"', "
                        f"got 'type: \"{schema.get('type')}\"'.", f"tools[{k}].function.parameters")
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as e:
            return _bad(f"Invalid schema for function '{name}': {e.message}.", f"tools[{k}].function.parameters")
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        if choice.get("type") != "function" or wanted not in names:
            return _bad(f"Invalid value for 'tool_choice': function '{wanted}' is not among the tools.", "tool_choice")
    elif choice is not None and choice not in ("none", "auto", "required"):
        return _bad(f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'.", "tool_choice")
    return None
