"""What the Messages API refuses, checked on every request the Anthropic fake receives.

``validate(body)`` returns the ``HttpError`` (400, ``invalid_request_error``, with the API's
message text) for the first problem found, or None. The points checked are those a client can
get wrong: required fields (``max_tokens`` among them), user and assistant turns alternating,
content block types per role, every ``tool_result`` answering a ``tool_use`` of the assistant
turn just before (and every ``tool_use`` answered in the next turn), tool schemas,
``tool_choice`` and the thinking budget.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema

from .script import HttpError

_BLOCKS = {
    "user": ("text", "image", "document", "tool_result", "search_result"),
    "assistant": ("text", "tool_use", "thinking", "redacted_thinking"),
}
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _bad(message: str) -> HttpError:
    return HttpError(400, message, type="invalid_request_error")


def validate(body: dict[str, Any]) -> HttpError | None:
    for name in ("model", "max_tokens", "messages"):
        if name not in body:
            return _bad(f"{name}: Field required")
    max_tokens = body["max_tokens"]
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        return _bad("max_tokens: Input should be a valid integer")
    if max_tokens < 1:
        return _bad("max_tokens: Input should be greater than or equal to 1")
    thinking = body.get("thinking")
    if isinstance(thinking, dict) and thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            return _bad("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if max_tokens <= budget:
            return _bad("`max_tokens` must be greater than `thinking.budget_tokens`.")
    return _system(body.get("system")) or _messages(body["messages"]) or _tools(body)


def _system(system: Any) -> HttpError | None:
    if system is None or isinstance(system, str):
        return None
    if not isinstance(system, list):
        return _bad("system: Input should be a valid list")
    for k, block in enumerate(system):
        if not isinstance(block, dict) or block.get("type") != "text":
            return _bad(f"system.{k}.type: Input should be 'text'")
        if not block.get("text"):
            return _bad("system: text content blocks must be non-empty")
    return None


def _messages(messages: Any) -> HttpError | None:
    if not isinstance(messages, list):
        return _bad("messages: Input should be a valid list")
    previous_role = ""
    tool_uses: list[str] = []  # the tool_use ids of the assistant turn just before
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role == "system":
            return _bad('messages: Unexpected role "system". The Messages API accepts a top-level `system` '
                        'parameter, not "system" as an input message role.')
        if role not in _BLOCKS:
            return _bad(f"messages.{i}.role: Input should be 'user' or 'assistant'")
        if role == previous_role:
            return _bad(f'messages: roles must alternate between "user" and "assistant", but found multiple '
                        f'"{role}" roles in a row')
        content = m.get("content")
        if isinstance(content, str):
            if not content and not (role == "assistant" and i == len(messages) - 1):
                return _bad(f"messages.{i}: all messages must have non-empty content except for the optional "
                            "final assistant message")
            content = [{"type": "text", "text": content}] if content else []
        if not isinstance(content, list):
            return _bad(f"messages.{i}.content: Input should be a valid list")
        if not content and not (role == "assistant" and i == len(messages) - 1):
            return _bad(f"messages.{i}: all messages must have non-empty content except for the optional final "
                        "assistant message")
        results: list[str] = []
        uses: list[str] = []
        for j, block in enumerate(content):
            problem = _block(role, block, f"messages.{i}.content.{j}")
            if problem is not None:
                return problem
            if block["type"] == "tool_result":
                if block["tool_use_id"] not in tool_uses:
                    return _bad(f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` "
                                f"blocks: {block['tool_use_id']}. Each `tool_result` block must have a "
                                "corresponding `tool_use` block in the previous message.")
                results.append(block["tool_use_id"])
            elif block["type"] == "tool_use":
                uses.append(block["id"])
        missing = [u for u in tool_uses if u not in results]
        if missing:
            return _bad(f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks immediately "
                        f"after: {', '.join(missing)}. Each `tool_use` block must have a corresponding "
                        "`tool_result` block in the next message.")
        previous_role, tool_uses = role, uses
    return None


def _block(role: str, block: Any, at: str) -> HttpError | None:
    kind = block.get("type") if isinstance(block, dict) else None
    allowed = _BLOCKS[role]
    if kind not in allowed:
        if kind in _BLOCKS["user"] + _BLOCKS["assistant"]:
            where = "user" if role == "assistant" else "assistant"
            return _bad(f"{at}: `{kind}` blocks can only be in `{where}` messages")
        tags = ", ".join(f"'{a}'" for a in allowed)
        return _bad(f"{at}.type: Input tag '{kind}' found using 'type' does not match any of the expected "
                    f"tags: {tags}")
    required = {"text": ("text",), "image": ("source",), "document": ("source",),
                "tool_result": ("tool_use_id",), "tool_use": ("id", "name", "input"),
                "thinking": ("thinking", "signature"), "redacted_thinking": ("data",)}.get(kind, ())
    for name in required:
        if name not in block:
            return _bad(f"{at}.{kind}.{name}: Field required")
    if kind == "text" and not block["text"]:
        return _bad("messages: text content blocks must be non-empty")
    if kind == "tool_use" and not isinstance(block["input"], dict):
        return _bad(f"{at}.tool_use.input: Input should be a valid dictionary")
    return None


def _tools(body: dict[str, Any]) -> HttpError | None:
    tools = body.get("tools")
    choice = body.get("tool_choice")
    if not tools:
        if choice is not None and choice.get("type") != "none":
            return _bad("tool_choice: tool_choice may only be specified while providing tools.")
        return None
    names = []
    for k, tool in enumerate(tools):
        name = tool.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            return _bad(f"tools.{k}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'")
        names.append(name)
        schema = tool.get("input_schema")
        if schema is None:
            return _bad(f"tools.{k}.custom.input_schema: Field required")
        if not isinstance(schema, dict):
            return _bad(f"tools.{k}.custom.input_schema: Input should be a valid dictionary")
        if schema.get("type") != "object":
            return _bad(f"tools.{k}.custom.input_schema.type: Input should be 'object'")
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError:
            return _bad(f"tools.{k}.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft "
                        "2020-12.")
    if isinstance(choice, dict):
        kind = choice.get("type")
        if kind not in ("auto", "any", "tool", "none"):
            return _bad(f"tool_choice.type: Input tag '{kind}' found using 'type' does not match any of the "
                        "expected tags: 'auto', 'any', 'tool', 'none'")
        if kind == "tool" and choice.get("name") not in names:
            return _bad(f"tool_choice: Tool '{choice.get('name')}' not found in tools")
    return None
