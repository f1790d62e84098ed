"""A loopback Chat Completions server speaking OpenAI's streaming wire format.

``data: {chat.completion.chunk}`` events, then (with ``stream_options.include_usage``) a usage
chunk with empty ``choices``, then ``data: [DONE]``. Errors use OpenAI's error JSON.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

from .script import (
    CONTEXT_LENGTH_EXCEEDED,
    DEFAULT_ERROR_MESSAGES,
    HttpError,
    ScriptStep,
    Turn,
    next_id,
)
from . import strict_openai
from .server import ScriptedServer, sse

_FINISH = {
    "stop": "stop",
    "length": "length",
    "tool-calls": "tool_calls",
    "content-filter": "content_filter",
}
_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
    500: "server_error",
    503: "server_error",
}
_ERROR_CODES = {401: "invalid_api_key", 404: "model_not_found", 429: "rate_limit_exceeded"}
CONTEXT_LENGTH_MESSAGE = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted in "
    "130000 tokens. Please reduce the length of the messages. (context length exceeded)"
)


class OpenAIServer(ScriptedServer):
    """``base_url`` is ``http://127.0.0.1:PORT/v1``.

    ``reasoning_field`` is the delta field reasoning text streams in (``reasoning_content`` as
    vLLM and DeepSeek send it, or ``reasoning``).
    """

    api_path = "/v1/chat/completions"
    provider = "openai"

    def __init__(
        self, script: Iterable[ScriptStep] = (), *, reasoning_field: str = "reasoning_content"
    ) -> None:
        self.reasoning_field = reasoning_field
        super().__init__(script)

    @property
    def base_url(self) -> str:
        return f"{self.origin}/v1"

    def response_headers(self) -> dict[str, str]:
        return {"x-request-id": f"req_{next_id()}"}

    def validate(self, body: dict[str, Any]) -> HttpError | None:
        return strict_openai.validate(body)

    def error_body(self, error: HttpError) -> dict[str, Any]:
        return {"error": _error_object(error)}

    def events(self, turn: Turn, request: dict[str, Any]) -> Iterator[bytes]:
        n = next_id()
        base = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": turn.model or request.get("model", ""),
            "system_fingerprint": "fp_scripted",
        }
        include_usage = bool((request.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            body = base | {
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            }
            return sse(body | ({"usage": None} if include_usage else {}))

        yield chunk({"role": "assistant", "content": "", "refusal": None})
        for piece in turn.reasoning_deltas:
            yield chunk({self.reasoning_field: piece})
        for piece in turn.text_deltas:
            yield chunk({"content": piece})
        for index, call in enumerate(turn.tool_calls):
            call_id = call.id or f"call_{next_id()}"
            head = {"index": index, "id": call_id, "type": "function"}
            yield chunk({"tool_calls": [head | {"function": {"name": call.name, "arguments": ""}}]})
            for piece in call.arg_deltas():
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        if turn.stream_error is not None:
            # How OpenAI reports a failure after the 200: an error object instead of a chunk.
            yield sse({"error": _error_object(turn.stream_error)})
            return
        yield chunk({}, _FINISH.get(turn.neutral_finish, turn.neutral_finish))
        if include_usage:
            yield sse(base | {"choices": [], "usage": _usage(turn)})
        yield sse("[DONE]")


def _error_object(error: HttpError) -> dict[str, Any]:
    if error.code == CONTEXT_LENGTH_EXCEEDED:
        return {
            "message": error.message or CONTEXT_LENGTH_MESSAGE,
            "type": error.type or "invalid_request_error",
            "param": error.param or "messages",
            "code": CONTEXT_LENGTH_EXCEEDED,
        }
    return {
        "message": error.message or DEFAULT_ERROR_MESSAGES.get(error.status, "Error."),
        "type": error.type or _ERROR_TYPES.get(error.status, "server_error"),
        "param": error.param,
        "code": error.code if error.code is not None else _ERROR_CODES.get(error.status),
    }


def _usage(turn: Turn) -> dict[str, Any]:
    u = turn.usage
    output = turn.output_tokens()
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": output,
        "total_tokens": u.input_tokens + output,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": u.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    }
