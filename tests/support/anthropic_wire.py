"""A loopback Messages API server speaking Anthropic's streaming wire format.

``message_start``, ``ping``, per block ``content_block_start`` / ``content_block_delta``
(``thinking_delta`` + ``signature_delta``, ``text_delta``, ``input_json_delta``) /
``content_block_stop``, then ``message_delta`` (stop reason, usage) and ``message_stop``.
Errors use Anthropic's ``{"type": "error", "error": {...}}`` JSON, and ``event: error`` in-stream.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .script import CONTEXT_LENGTH_EXCEEDED, DEFAULT_ERROR_MESSAGES, HttpError, Turn, next_id
from . import strict_anthropic
from .server import ScriptedServer, sse

_FINISH = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool-calls": "tool_use",
    "content-filter": "refusal",
}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
CONTEXT_LENGTH_MESSAGE = (
    "prompt is too long: 210000 tokens > 200000 maximum (context length exceeded)"
)


class AnthropicServer(ScriptedServer):
    """``base_url`` is ``http://127.0.0.1:PORT`` (the SDK appends ``/v1/messages``)."""

    api_path = "/v1/messages"
    provider = "anthropic"

    @property
    def base_url(self) -> str:
        return self.origin

    def response_headers(self) -> dict[str, str]:
        return {"request-id": f"req_{next_id()}"}

    def validate(self, body: dict[str, Any]) -> HttpError | None:
        return strict_anthropic.validate(body)

    def error_body(self, error: HttpError) -> dict[str, Any]:
        return {"type": "error", "error": _error_object(error), "request_id": f"req_{next_id()}"}

    def events(self, turn: Turn, request: dict[str, Any]) -> Iterator[bytes]:
        u = turn.usage
        fresh_input = max(0, u.input_tokens - u.cached_tokens - u.cache_write_tokens)
        message: dict[str, Any] = {
            "id": f"msg_{next_id():012d}",
            "type": "message",
            "role": "assistant",
            "model": turn.model or request.get("model", ""),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": fresh_input,
                "cache_creation_input_tokens": u.cache_write_tokens,
                "cache_read_input_tokens": u.cached_tokens,
                "output_tokens": 1,
                "service_tier": "standard",
            },
        }
        yield sse({"type": "message_start", "message": message}, "message_start")
        yield sse({"type": "ping"}, "ping")
        index = 0

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> Iterator[bytes]:
            yield sse(
                {"type": "content_block_start", "index": index, "content_block": start},
                "content_block_start",
            )
            for delta in deltas:
                yield sse(
                    {"type": "content_block_delta", "index": index, "delta": delta},
                    "content_block_delta",
                )
            yield sse({"type": "content_block_stop", "index": index}, "content_block_stop")

        if turn.reasoning_deltas:
            deltas = [{"type": "thinking_delta", "thinking": t} for t in turn.reasoning_deltas]
            deltas.append({"type": "signature_delta", "signature": turn.signature})
            yield from block({"type": "thinking", "thinking": "", "signature": ""}, deltas)
            index += 1
        if turn.redacted_reasoning:
            yield from block({"type": "redacted_thinking", "data": turn.redacted_reasoning}, [])
            index += 1
        if turn.text_deltas:
            deltas = [{"type": "text_delta", "text": t} for t in turn.text_deltas]
            yield from block({"type": "text", "text": ""}, deltas)
            index += 1
        for call in turn.tool_calls:
            start = {
                "type": "tool_use",
                "id": call.id or f"toolu_{next_id():012d}",
                "name": call.name,
                "input": {},
            }
            # The API opens every tool_use block with an empty partial_json.
            pieces = ["", *call.arg_deltas()]
            yield from block(
                start, [{"type": "input_json_delta", "partial_json": p} for p in pieces]
            )
            index += 1
        if turn.stream_error is not None:
            yield sse({"type": "error", "error": _error_object(turn.stream_error)}, "error")
            return
        usage: dict[str, Any] = {"output_tokens": turn.output_tokens()}
        if u.reasoning_tokens:
            usage["output_tokens_details"] = {"thinking_tokens": u.reasoning_tokens}
        stop = _FINISH.get(turn.neutral_finish, turn.neutral_finish)
        yield sse(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": usage,
            },
            "message_delta",
        )
        yield sse({"type": "message_stop"}, "message_stop")


def _error_object(error: HttpError) -> dict[str, Any]:
    if error.code == CONTEXT_LENGTH_EXCEEDED:
        return {
            "type": error.type or "invalid_request_error",
            "message": error.message or CONTEXT_LENGTH_MESSAGE,
        }
    return {
        "type": error.type or _ERROR_TYPES.get(error.status, "api_error"),
        "message": error.message
        or DEFAULT_ERROR_MESSAGES.get(error.status, "Internal server error"),
    }
