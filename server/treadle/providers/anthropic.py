"""``anthropic/<model>``: the Messages API through the official ``anthropic`` SDK, streamed.

Provider options (``request.provider_options["anthropic"]``, camelCase or snake_case):
``thinking: {type: "enabled", budgetTokens: N}``; per prompt message,
``cacheControl: {type: "ephemeral"}`` marks the message's last block as a cache breakpoint.

Usage: the API reports ``input_tokens`` *excluding* cache reads and cache writes; Treadle's
``input_tokens`` is the whole prompt (input + cache read + cache creation, as the API documents
the total), so it means the same as OpenAI's ``prompt_tokens``; ``cached_input_tokens`` is the
cache-read part. SDK 2.x has no temperature/top_p/seed/penalty arguments, so those settings are
not sent to Anthropic.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import anthropic

from ..core.chunks import (
    Chunk,
    FinishReason,
    ReasoningDelta,
    ReasoningEnd,
    ReasoningStart,
    ResponseMetadata,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallDelta,
    ToolCallInputStreamingEnd,
    ToolCallInputStreamingStart,
    ToolCallPayload,
    Usage,
)
from ..core.errors import APICallError
from ..core.messages import (
    FilePart,
    PromptMessage,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from . import _common
from .base import ModelFinish, ModelRequest

PROVIDER = "anthropic"
DEFAULT_MAX_TOKENS = 4096

_FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool-calls",
    "refusal": "content-filter",
    "pause_turn": "other",
}

# The status an error event in the stream would have had as an HTTP response.
_STREAM_ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicModel:
    """A Messages API model behind an ``AsyncAnthropic`` client (shared, owned by the router)."""

    def __init__(self, model_id: str, client: anthropic.AsyncAnthropic) -> None:
        self._model_id = model_id
        self._client = client

    @property
    def provider(self) -> str:
        return PROVIDER

    @property
    def model_id(self) -> str:
        return self._model_id

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        client = self._client
        if request.settings.max_retries is not None:
            client = client.with_options(max_retries=request.settings.max_retries)
        params = self.build_params(request)
        async for chunk in _common.stream_chunks(
            lambda: client.messages.create(**params), _StreamState(), anthropic.APIError, self._error
        ):
            yield chunk

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``messages.create`` for ``request``."""
        options = dict(request.provider_options.get(PROVIDER) or {})
        system, messages = convert_prompt(request.prompt)
        params: dict[str, Any] = {"model": self._model_id, "messages": messages, "stream": True}
        if system:
            params["system"] = system
        max_tokens = request.settings.max_output_tokens
        thinking = _thinking(_common.option(options, "thinking"))
        if thinking is not None:
            params["thinking"] = thinking
            budget = thinking.get("budget_tokens")
            if max_tokens is None and isinstance(budget, int):
                # The budget counts toward max_tokens and must stay below it.
                max_tokens = budget + DEFAULT_MAX_TOKENS
        params["max_tokens"] = max_tokens or DEFAULT_MAX_TOKENS
        if thinking is not None and thinking.get("type") == "enabled":
            self._check_thinking(params["max_tokens"], thinking.get("budget_tokens"), request.tool_choice if request.tools else None)
        if request.settings.stop_sequences:
            params["stop_sequences"] = list(request.settings.stop_sequences)
        if request.tools:
            params["tools"] = [
                {"name": t.name, "input_schema": t.input_schema}
                | ({"description": t.description} if t.description else {})
                for t in request.tools
            ]
            params["tool_choice"] = _tool_choice(request.tool_choice)
        if request.structured_output is not None:
            params["output_config"] = {
                "format": {"type": "json_schema", "schema": request.structured_output["schema"]}
            }
        return params

    def _check_thinking(self, max_tokens: int, budget: Any, tool_choice: Any) -> None:
        """Combinations the API refuses with a 400 are refused here, before anything is sent."""
        problem = ""
        if tool_choice == "required" or isinstance(tool_choice, dict):
            problem = "extended thinking cannot be combined with a forced tool choice"
        elif isinstance(budget, int) and max_tokens <= budget:
            problem = f"max_tokens ({max_tokens}) must be above the thinking budget ({budget})"
        if problem:
            raise APICallError(f"refused before sending: {problem}", provider=PROVIDER, model_id=self._model_id)

    def _error(self, e: anthropic.APIError) -> APICallError:
        if isinstance(e, anthropic.APIStatusError):
            body = e.body if e.status_code < 400 else _common.response_body(e.response, e.body)
            message = _common.error_message(body, e.message)
            status: int | None = e.status_code
            if e.status_code < 400:
                # An `event: error` inside a 200 stream: report the status it stands for.
                kind = e.type or ""
                status = _STREAM_ERROR_STATUS.get(kind)
                message = f"{message} ({kind})" if kind else message
            return _common.status_error(
                provider=PROVIDER,
                model_id=self._model_id,
                status=status,
                message=message,
                body=body,
                response=e.response if e.status_code >= 400 else None,
            )
        if isinstance(e, anthropic.APIConnectionError):
            return _common.connection_error(
                provider=PROVIDER, model_id=self._model_id, message=e.message, base_url=str(self._client.base_url)
            )
        return _common.status_error(
            provider=PROVIDER, model_id=self._model_id, status=None, message=e.message, body=e.body
        )


# --- the stream -----------------------------------------------------------------------------


@dataclass
class _Block:
    kind: str  # text | reasoning | redacted | tool | ignored
    id: str
    name: str = ""
    text: str = ""
    signature: str = ""
    redacted_data: str = ""


@dataclass
class _StreamState:
    """Turns raw Messages stream events into Treadle chunks; one instance per call."""

    blocks: dict[int, _Block] = field(default_factory=dict)
    response_id: str = ""
    response_model: str = ""
    raw_reason: str = ""
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0

    def feed(self, event: Any) -> list[Chunk]:
        kind = event.type
        if kind == "message_start":
            msg = event.message
            self.response_id, self.response_model = msg.id, msg.model
            self._usage(msg.usage)
            return [Chunk.of(ResponseMetadata(id=msg.id, model_id=msg.model))]
        if kind == "content_block_start":
            return self._start(event.index, event.content_block)
        if kind == "content_block_delta":
            return self._delta(self.blocks.get(event.index), event.delta)
        if kind == "content_block_stop":
            return self._stop(self.blocks.pop(event.index, None))
        if kind == "message_delta":
            if event.delta.stop_reason:
                self.raw_reason = event.delta.stop_reason
            self._usage(event.usage)
        return []

    def finish(self) -> list[Chunk]:
        out: list[Chunk] = []
        for index in sorted(self.blocks):  # blocks left open by a stream cut short
            out += self._stop(self.blocks.pop(index))
        input_total = self.input_tokens + self.cache_read + self.cache_write
        usage = Usage(
            input_tokens=input_total,
            output_tokens=self.output_tokens,
            total_tokens=input_total + self.output_tokens,
            reasoning_tokens=self.thinking_tokens,
            cached_input_tokens=self.cache_read,
        )
        finish = ModelFinish(
            reason=_FINISH_REASONS.get(self.raw_reason, "unknown"),
            usage=usage,
            raw_reason=self.raw_reason,
            response_id=self.response_id,
            response_model=self.response_model,
        )
        out.append(Chunk(type="finish", payload=finish))
        return out

    def _usage(self, u: Any) -> None:
        # message_start carries the input side; message_delta's counts are cumulative.
        if u is None:
            return
        if u.input_tokens is not None:
            self.input_tokens = u.input_tokens
        if u.cache_read_input_tokens is not None:
            self.cache_read = u.cache_read_input_tokens
        if u.cache_creation_input_tokens is not None:
            self.cache_write = u.cache_creation_input_tokens
        if u.output_tokens is not None:
            self.output_tokens = u.output_tokens
        details = getattr(u, "output_tokens_details", None)
        if details is not None and details.thinking_tokens is not None:
            self.thinking_tokens = details.thinking_tokens

    def _start(self, index: int, block: Any) -> list[Chunk]:
        if block.type == "text":
            b = self.blocks[index] = _Block("text", _common.block_id("text"))
            out = [Chunk.of(TextStart(id=b.id))]
            return out + ([Chunk.of(TextDelta(id=b.id, text=block.text))] if block.text else [])
        if block.type == "thinking":
            b = self.blocks[index] = _Block("reasoning", _common.block_id("reasoning"))
            b.signature = block.signature or ""
            out = [Chunk.of(ReasoningStart(id=b.id))]
            if block.thinking:
                out.append(Chunk.of(ReasoningDelta(id=b.id, text=block.thinking)))
            return out
        if block.type == "redacted_thinking":
            b = self.blocks[index] = _Block("redacted", _common.block_id("reasoning"))
            b.redacted_data = block.data
            meta = {PROVIDER: {"redactedData": block.data}}
            return [Chunk.of(ReasoningStart(id=b.id, provider_metadata=meta))]
        if block.type == "tool_use":
            b = self.blocks[index] = _Block("tool", block.id, name=block.name)
            return [Chunk.of(ToolCallInputStreamingStart(tool_call_id=b.id, tool_name=b.name))]
        # Server tools and their results are not part of Treadle's chunk set yet.
        self.blocks[index] = _Block("ignored", "")
        return []

    def _delta(self, b: _Block | None, delta: Any) -> list[Chunk]:
        if b is None:
            return []
        if delta.type == "text_delta" and b.kind == "text" and delta.text:
            return [Chunk.of(TextDelta(id=b.id, text=delta.text))]
        if delta.type == "thinking_delta" and b.kind == "reasoning" and delta.thinking:
            return [Chunk.of(ReasoningDelta(id=b.id, text=delta.thinking))]
        if delta.type == "signature_delta" and b.kind == "reasoning":
            b.signature += delta.signature
        elif delta.type == "input_json_delta" and b.kind == "tool" and delta.partial_json:
            b.text += delta.partial_json
            return [
                Chunk.of(
                    ToolCallDelta(
                        tool_call_id=b.id, args_text_delta=delta.partial_json, tool_name=b.name
                    )
                )
            ]
        return []

    def _stop(self, b: _Block | None) -> list[Chunk]:
        if b is None or b.kind == "ignored":
            return []
        if b.kind == "text":
            return [Chunk.of(TextEnd(id=b.id))]
        if b.kind == "reasoning":
            meta = {PROVIDER: {"signature": b.signature}} if b.signature else None
            return [Chunk.of(ReasoningEnd(id=b.id, signature=b.signature, provider_metadata=meta))]
        if b.kind == "redacted":
            meta = {PROVIDER: {"redactedData": b.redacted_data}}
            return [Chunk.of(ReasoningEnd(id=b.id, provider_metadata=meta))]
        return [
            Chunk.of(ToolCallInputStreamingEnd(tool_call_id=b.id)),
            Chunk.of(
                ToolCallPayload(
                    tool_call_id=b.id, tool_name=b.name, args=_common.parse_tool_args(b.text)
                )
            ),
        ]


# --- the prompt -----------------------------------------------------------------------------


def convert_prompt(
    prompt: list[PromptMessage],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Treadle's prompt as ``(system, messages)``.

    Tool results travel in user messages, and consecutive messages of one role are merged,
    because the API requires user and assistant turns to alternate.
    """
    system: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for message in prompt:
        cache = _cache_control(message.provider_options)
        if message.role == "system":
            block: dict[str, Any] = {"type": "text", "text": _common.joined_text(message.content)}
            system.append(block | ({"cache_control": cache} if cache else {}))
            continue
        role = "assistant" if message.role == "assistant" else "user"
        blocks = [b for p in message.content if (b := _block(p)) is not None]
        if not blocks:
            continue
        if cache:
            blocks[-1] = blocks[-1] | {"cache_control": cache}
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": role, "content": blocks})
    return system, messages


def _block(part: Any) -> dict[str, Any] | None:
    block = _plain_block(part)
    cache = _cache_control(getattr(part, "provider_metadata", None))
    return block | {"cache_control": cache} if block is not None and cache else block


def _plain_block(part: Any) -> dict[str, Any] | None:
    if isinstance(part, TextPart):
        return {"type": "text", "text": part.text} if part.text else None
    if isinstance(part, ReasoningPart):
        if part.redacted_data:
            return {"type": "redacted_thinking", "data": part.redacted_data.decode("ascii")}
        meta = (part.provider_metadata or {}).get(PROVIDER) or {}
        signature = part.signature or meta.get("signature") or ""
        if meta.get("redactedData"):
            return {"type": "redacted_thinking", "data": meta["redactedData"]}
        # The API refuses thinking blocks without the signature it issued.
        return (
            {"type": "thinking", "thinking": part.text, "signature": signature}
            if signature
            else None
        )
    if isinstance(part, ToolCallPart):
        args = _common.parse_tool_args(part.args) if isinstance(part.args, str) else part.args
        return {
            "type": "tool_use",
            "id": part.tool_call_id,
            "name": part.tool_name,
            "input": args if isinstance(args, dict) else {},
        }
    if isinstance(part, ToolResultPart):
        block = {
            "type": "tool_result",
            "tool_use_id": part.tool_call_id,
            "content": _common.encode_tool_result(part.result),
        }
        return block | ({"is_error": True} if part.is_error else {})
    if isinstance(part, FilePart):
        return _file(part)
    return None


def _file(part: FilePart) -> dict[str, Any]:
    kind = "image" if part.mime_type.startswith("image/") else "document"
    if kind == "image" or part.mime_type == "application/pdf":
        data = base64.b64encode(part.data).decode("ascii")
        source = {"type": "base64", "media_type": part.mime_type, "data": data}
        return {"type": kind, "source": source if part.data else {"type": "url", "url": part.url}}
    if part.mime_type.startswith("text/") and part.data:
        text = part.data.decode("utf-8", errors="replace")
        source = {"type": "text", "media_type": "text/plain", "data": text}
        return {"type": "document", "source": source}
    return {"type": "text", "text": f"[file {part.filename or part.mime_type}: {part.url}]"}


def _cache_control(options: dict[str, Any] | None) -> dict[str, Any] | None:
    mine = (options or {}).get(PROVIDER) or {}
    value = _common.option(mine, "cacheControl", "cache_control")
    return dict(value) if isinstance(value, dict) else None


def _thinking(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    out = {k: v for k, v in value.items() if k not in ("budgetTokens", "budget_tokens")}
    budget = _common.option(value, "budgetTokens", "budget_tokens")
    if budget is not None:
        out["budget_tokens"] = int(budget)
    return out


def _tool_choice(choice: Any) -> dict[str, Any]:
    if isinstance(choice, dict):
        return {"type": "tool", "name": choice["tool_name"]}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}.get(choice, "auto")}
