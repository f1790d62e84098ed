"""``TokenLimiter``: keeps the prompt's conversation under a token limit (dropping the oldest
turns, for this call only) and cuts oversized tool results."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ...core.messages import Prompt, PromptMessage, TextPart, ToolInvocationPart
from ...core.args import ProcessLLMRequestArgs, ProcessToolResultArgs
from ...core.results import ProcessLLMRequestResult
from ._options import require

CHARS_PER_TOKEN = 4
"""Tokens are estimated, not counted: about four characters of English text make a token."""


def estimate_tokens(value: Any) -> int:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def _message_tokens(m: PromptMessage) -> int:
    total = 4  # role and framing
    for part in m.content:
        text = getattr(part, "text", None)
        if text is None:
            text = getattr(part, "result", None) if part.type == "tool-result" else getattr(part, "args", None)
        total += estimate_tokens(text if text is not None else "")
    return total


@dataclass(frozen=True)
class TokenLimiterOptions:
    max_tokens: int | None = 4000
    """The most (estimated) tokens of conversation sent to the model, system messages included.
    The oldest turns are left out of the prompt first; the last user turn is always kept."""
    max_tool_result_tokens: int | None = None
    """The most (estimated) tokens of one tool result; a longer one is cut and marked."""

    def __post_init__(self) -> None:
        require(self.max_tokens is None or self.max_tokens > 0, "option 'maxTokens' must be > 0")
        require(self.max_tool_result_tokens is None or self.max_tool_result_tokens > 0,
                "option 'maxToolResultTokens' must be > 0")


class TokenLimiter:
    name = "Token limiter"
    description = "Keeps the prompt and each tool result under a token limit."

    def __init__(
        self, *, max_tokens: int | None = 4000, max_tool_result_tokens: int | None = None,
        id: str = "token-limiter",
    ) -> None:
        self.id = id
        self.options = TokenLimiterOptions(max_tokens, max_tool_result_tokens)

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> ProcessLLMRequestResult | None:
        limit = self.options.max_tokens
        if limit is None:
            return None
        trimmed = trim_prompt(args.prompt, limit)
        return ProcessLLMRequestResult(prompt=trimmed) if trimmed is not None else None

    def process_tool_result(self, args: ProcessToolResultArgs) -> None:
        limit = self.options.max_tool_result_tokens
        if limit is None or estimate_tokens(args.result) <= limit:
            return
        text = args.result if isinstance(args.result, str) else json.dumps(args.result, default=str, ensure_ascii=False)
        kept = text[: limit * CHARS_PER_TOKEN]
        cut = f"{kept}\n[truncated: {estimate_tokens(text) - limit} more tokens]"
        args.message_list.update_tool_invocation(ToolInvocationPart(
            tool_call_id=args.tool_call_id, tool_name=args.tool_name, args=args.args,
            state="result", result=cut,
        ))


def trim_prompt(prompt: Prompt, limit: int) -> Prompt | None:
    """``prompt`` without its oldest turns so that it fits ``limit``; None when it fits.

    A turn starts at a user message, so a tool call is never separated from its result."""
    system = [m for m in prompt if m.role == "system"]
    rest = [m for m in prompt if m.role != "system"]
    budget = limit - sum(_message_tokens(m) for m in system)
    total = sum(_message_tokens(m) for m in rest)
    if total <= budget:
        return None
    starts = [i for i, m in enumerate(rest) if m.role == "user"]
    keep_from = starts[-1] if starts else len(rest) - 1
    for i in starts:
        if sum(_message_tokens(m) for m in rest[i:]) <= budget:
            keep_from = i
            break
    kept = rest[keep_from:]
    if not kept:  # nothing but system messages
        return None
    if kept[0].role != "user":  # pragma: no cover - a prompt always has a user turn
        kept = [PromptMessage("user", [TextPart("")]), *kept]
    return [*system, *kept]
