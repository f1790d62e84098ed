"""Provider-neutral scripts for the wire-level test servers.

A script is a list of ``Turn``s (or callables ``request_body -> Turn``); a server plays one turn
per POST. The same script can be played by the OpenAI and the Anthropic server, so one test can
run against either provider.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeAlias

_ids = itertools.count(1)


def next_id() -> int:
    return next(_ids)


@dataclass
class ScriptedToolCall:
    """A tool call; ``chunks`` splits the argument JSON into that many streamed deltas."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    id: str = ""
    chunks: int = 1

    @property
    def args_json(self) -> str:
        return self.args if isinstance(self.args, str) else json.dumps(self.args)

    def arg_deltas(self) -> list[str]:
        text = self.args_json
        n = max(1, min(self.chunks, len(text)))
        size = -(-len(text) // n) if text else 1
        return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass
class ScriptedUsage:
    """Token counts, in OpenAI's sense: ``input_tokens`` includes cached and cache-write tokens.

    ``output_tokens=None`` means one token per streamed delta.
    """

    input_tokens: int = 10
    output_tokens: int | None = None
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0


# Default messages, per HTTP status, when a test gives none.
DEFAULT_ERROR_MESSAGES = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    403: "Permission denied.",
    404: "The model does not exist.",
    429: "Rate limit reached. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    503: "The service is unavailable.",
    529: "Overloaded",
}

CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded"


@dataclass
class HttpError:
    """An error response (or, as ``Turn.stream_error``, an error event in the stream).

    ``type``/``code`` default per provider; ``code="context_length_exceeded"`` produces each
    provider's real context-length message. ``retry_after_ms`` adds the ``retry-after-ms``
    header that both SDKs honour, which makes SDK retries fast in tests; ``retry_after``
    adds the standard ``retry-after`` header (seconds).
    """

    status: int
    message: str = ""
    type: str = ""
    code: str | None = None
    param: str | None = None
    retry_after_ms: float | None = None
    retry_after: float | None = None

    @classmethod
    def context_length(cls) -> HttpError:
        return cls(400, code=CONTEXT_LENGTH_EXCEEDED)


@dataclass
class Turn:
    """One model response.

    ``text``/``reasoning``: a string (one delta) or a list of deltas. ``signature``: the thinking
    block's signature (Anthropic). ``redacted_reasoning``: an Anthropic redacted_thinking block's
    data. ``finish_reason``: provider-neutral (stop, length, tool-calls, content-filter) or a raw
    provider value; by default stop, or tool-calls when there are tool calls. ``model``: the
    response's model name (default: the requested one).
    """

    text: str | list[str] = ""
    reasoning: str | list[str] = ""
    signature: str = "sig-scripted"
    redacted_reasoning: str = ""
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)
    usage: ScriptedUsage = field(default_factory=ScriptedUsage)
    finish_reason: str | None = None
    error: HttpError | None = None
    stream_error: HttpError | None = None
    delay_before: float | None = None
    pace: float | None = None
    """Seconds between two streamed events: an answer that is still streaming when a test acts."""
    model: str | None = None

    @classmethod
    def say(cls, text: str | list[str], **kw: Any) -> Turn:
        return cls(text=text, **kw)

    @classmethod
    def call(cls, name: str, args: dict[str, Any] | str | None = None, **kw: Any) -> Turn:
        chunks = kw.pop("chunks", 1)
        call_id = kw.pop("id", "")
        call = ScriptedToolCall(name, {} if args is None else args, id=call_id, chunks=chunks)
        return cls(tool_calls=[call], **kw)

    @classmethod
    def fail(cls, status: int, message: str = "", **kw: Any) -> Turn:
        error_fields = {
            k: kw.pop(k) for k in ("type", "code", "param", "retry_after_ms", "retry_after") if k in kw
        }
        return cls(error=HttpError(status, message, **error_fields), **kw)

    @classmethod
    def context_length_exceeded(cls) -> Turn:
        return cls(error=HttpError.context_length())

    @property
    def text_deltas(self) -> list[str]:
        return _deltas(self.text)

    @property
    def reasoning_deltas(self) -> list[str]:
        return _deltas(self.reasoning)

    @property
    def neutral_finish(self) -> str:
        if self.finish_reason:
            return self.finish_reason
        return "tool-calls" if self.tool_calls else "stop"

    def output_tokens(self) -> int:
        if self.usage.output_tokens is not None:
            return self.usage.output_tokens
        deltas = len(self.text_deltas) + len(self.reasoning_deltas)
        deltas += sum(len(c.arg_deltas()) for c in self.tool_calls)
        return max(1, deltas)


def _deltas(value: str | list[str]) -> list[str]:
    if isinstance(value, str):
        return [value] if value else []
    return [v for v in value if v]


ScriptStep: TypeAlias = Turn | Callable[[dict[str, Any]], Turn]
