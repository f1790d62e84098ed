"""Helpers shared by the OpenAI and Anthropic adapters: the streamed call, ids, JSON, and error
mapping."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

from ..core.chunks import Chunk
from ..core.errors import APICallError
from ..core.messages import TextPart, new_id

RETRYABLE_STATUS = frozenset({408, 409, 429})


class EventTranslator(Protocol):
    """Turns one call's SDK stream events into Treadle chunks."""

    def feed(self, event: Any) -> list[Chunk]: ...

    def finish(self) -> list[Chunk]: ...


async def stream_chunks(
    create: Callable[[], Awaitable[Any]], translator: EventTranslator,
    sdk_error: type[Exception], to_error: Callable[[Any], APICallError],
) -> AsyncIterator[Chunk]:
    """Open the SDK stream with ``create`` and translate its events; the SDK's errors (of type
    ``sdk_error``) are raised as ``to_error(e)``. The stream is closed however iteration ends."""
    try:
        # The HTTP status is checked here, so a failed call raises before any chunk.
        response = await create()
    except sdk_error as e:
        raise to_error(e) from e
    try:
        async for event in response:
            for chunk in translator.feed(event):
                yield chunk
    except sdk_error as e:
        raise to_error(e) from e
    finally:
        await response.close()
    for chunk in translator.finish():
        yield chunk


def is_retryable_status(status: int | None) -> bool:
    """408, 409, 429 and every 5xx are worth retrying; other statuses never succeed as sent."""
    return status is not None and (status in RETRYABLE_STATUS or status >= 500)


def status_error(
    *, provider: str, model_id: str, status: int | None, message: str, body: Any,
    response: Any = None,
) -> APICallError:
    """``response`` is the failed HTTP response, whose headers (``retry-after``) are kept."""
    return APICallError(
        message,
        provider=provider,
        model_id=model_id,
        status_code=status,
        body=body,
        is_retryable=is_retryable_status(status),
        headers=response_headers(response),
    )


def response_headers(response: Any) -> dict[str, str]:
    headers = getattr(response, "headers", None)
    if headers is None:
        return {}
    return {str(k).lower(): str(v) for k, v in headers.items()}


_BASE_URL_ENV = {"openai": "OPENAI_BASE_URL", "anthropic": "ANTHROPIC_BASE_URL"}


def connection_error(*, provider: str, model_id: str, message: str, base_url: str = "") -> APICallError:
    """No response at all: the request may never have reached the server, so retrying is safe.
    The message names the URL, and says where it came from: the server's environment (or the
    agent's ``baseUrl``), never the client's."""
    if base_url:
        env = _BASE_URL_ENV.get(provider, "the provider's base URL")
        message = (f"{message.rstrip('.')}: cannot reach {base_url}. The URL comes from {env} (or the agent's "
                   f"baseUrl) and the key from the environment of the machine running `treadle serve`, "
                   f"not the client's")
    return APICallError(
        message, provider=provider, model_id=model_id, status_code=None, is_retryable=True
    )


def response_body(response: Any, fallback: Any) -> Any:
    """The HTTP error body as parsed JSON (the SDKs keep only part of it), else ``fallback``."""
    try:
        return json.loads(response.text)
    except Exception:  # noqa: BLE001 - an unread or non-JSON body is normal here
        return fallback


def error_message(body: Any, fallback: str) -> str:
    """``error.message`` from an OpenAI- or Anthropic-shaped error body."""
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str) and err["message"]:
            return str(err["message"])
    return fallback


def parse_tool_args(text: str) -> Any:
    """Parsed tool arguments; empty means ``{}``, and invalid JSON is kept as the raw string."""
    if not text.strip():
        return {}
    try:
        return json.loads(text)
    except ValueError:
        return text


def encode_tool_args(args: Any) -> str:
    """Arguments as the JSON text a provider expects (a raw string is sent unchanged)."""
    if isinstance(args, str):
        return args
    return json.dumps({} if args is None else args)


def encode_tool_result(result: Any) -> str:
    """A tool result as message text: strings as they are, anything else as JSON."""
    if isinstance(result, str):
        return result
    return json.dumps(result, default=str)


def joined_text(parts: list[Any]) -> str:
    """The text of a message's text parts, joined."""
    return "".join(p.text for p in parts if isinstance(p, TextPart))


def block_id(kind: str) -> str:
    return new_id(kind)


def option(options: dict[str, Any], *names: str) -> Any:
    """The first of ``names`` present in ``options`` (camelCase and snake_case spellings)."""
    for name in names:
        if name in options:
            return options[name]
    return None
