"""``openai/<model>``: Chat Completions through the official ``openai`` SDK, streamed.

Also serves any OpenAI-compatible server (vLLM, Ollama, llama.cpp, LM Studio...) given a base URL.
Reasoning text that such servers send as ``delta.reasoning_content`` or ``delta.reasoning`` is
read from the SDK model's extra fields, so nothing in the SDK is patched.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import openai

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
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from . import _common
from .base import ModelFinish, ModelRequest, ToolSpec

PROVIDER = "openai"

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool-calls",
    "function_call": "tool-calls",
    "content_filter": "content-filter",
}

# provider_options["openai"] keys passed as SDK arguments (camelCase or snake_case accepted).
_OPTION_ARGS = {
    "reasoning_effort": ("reasoningEffort", "reasoning_effort"),
    "parallel_tool_calls": ("parallelToolCalls", "parallel_tool_calls"),
    "user": ("user",),
    "store": ("store",),
    "service_tier": ("serviceTier", "service_tier"),
    "prompt_cache_key": ("promptCacheKey", "prompt_cache_key"),
    "metadata": ("metadata",),
}


class OpenAIChatModel:
    """A Chat Completions model behind an ``AsyncOpenAI`` client (shared, owned by the router).

    ``max_tokens_field`` names the output-token limit: OpenAI's own API wants
    ``max_completion_tokens`` (``max_tokens`` is deprecated and refused by reasoning models),
    while many compatible servers only know ``max_tokens``; the router picks per base URL.
    """

    def __init__(
        self,
        model_id: str,
        client: openai.AsyncOpenAI,
        *,
        max_tokens_field: str = "max_completion_tokens",
    ) -> None:
        self._model_id = model_id
        self._client = client
        self._max_tokens_field = max_tokens_field

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
            lambda: client.chat.completions.create(**params), _StreamState(), openai.APIError, self._error
        ):
            yield chunk

    def build_params(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of ``chat.completions.create`` for ``request``."""
        s = request.settings
        params: dict[str, Any] = {
            "model": self._model_id,
            "messages": convert_prompt(request.prompt),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            params["tools"] = [_tool(t) for t in request.tools]
            params["tool_choice"] = _tool_choice(request.tool_choice)
        optional = {
            self._max_tokens_field: s.max_output_tokens,
            "temperature": s.temperature,
            "top_p": s.top_p,
            "seed": s.seed,
            "presence_penalty": s.presence_penalty,
            "frequency_penalty": s.frequency_penalty,
            "stop": list(s.stop_sequences) or None,
        }
        params.update({k: v for k, v in optional.items() if v is not None})
        if request.structured_output is not None:
            so = request.structured_output
            schema: dict[str, Any] = {"name": so.get("name") or "response", "schema": so["schema"]}
            if "strict" in so:
                schema["strict"] = bool(so["strict"])
            params["response_format"] = {"type": "json_schema", "json_schema": schema}
        options = dict(request.provider_options.get(PROVIDER) or {})
        for arg, names in _OPTION_ARGS.items():
            value = _common.option(options, *names)
            if value is not None:
                params[arg] = value
        return params

    def _error(self, e: openai.APIError) -> APICallError:
        if isinstance(e, openai.APIStatusError):
            body = _common.response_body(e.response, e.body)
            return _common.status_error(
                provider=PROVIDER,
                model_id=self._model_id,
                status=e.status_code,
                message=_common.error_message(body, e.message),
                body=body,
                response=e.response,
            )
        if isinstance(e, openai.APIConnectionError):
            return _common.connection_error(
                provider=PROVIDER, model_id=self._model_id, message=e.message, base_url=str(self._client.base_url)
            )
        # An error object inside the event stream: the HTTP status was 200.
        return _common.status_error(
            provider=PROVIDER, model_id=self._model_id, status=None, message=e.message, body=e.body
        )


# --- the stream -----------------------------------------------------------------------------


@dataclass
class _ToolCallState:
    id: str
    name: str
    args: str = ""


@dataclass
class _StreamState:
    """Turns ``ChatCompletionChunk``s into Treadle chunks; one instance per call."""

    text_id: str = ""
    reasoning_id: str = ""
    tool_calls: dict[int, _ToolCallState] = field(default_factory=dict)
    response_id: str = ""
    response_model: str = ""
    raw_reason: str = ""
    usage: Usage = field(default_factory=Usage)

    def feed(self, event: Any) -> list[Chunk]:
        out: list[Chunk] = []
        if not self.response_id and event.id:
            self.response_id, self.response_model = event.id, event.model or ""
            out.append(
                Chunk.of(
                    ResponseMetadata(
                        id=event.id, model_id=self.response_model, timestamp=event.created
                    )
                )
            )
        if event.usage is not None:
            self.usage = _usage(event.usage)
        for choice in event.choices or []:
            if choice.index != 0:
                continue
            delta = choice.delta
            extra = delta.model_extra or {}
            reasoning = extra.get("reasoning_content") or extra.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                out += self._reasoning(reasoning)
            for text in (delta.content, delta.refusal):
                if text:
                    out += self._text(text)
            for tc in delta.tool_calls or []:
                out += self._tool_call(tc)
            if choice.finish_reason:
                self.raw_reason = choice.finish_reason
        return out

    def finish(self) -> list[Chunk]:
        out = self._close_text() + self._close_reasoning()
        for call in self.tool_calls.values():
            out.append(Chunk.of(ToolCallInputStreamingEnd(tool_call_id=call.id)))
            out.append(
                Chunk.of(
                    ToolCallPayload(
                        tool_call_id=call.id,
                        tool_name=call.name,
                        args=_common.parse_tool_args(call.args),
                    )
                )
            )
        reason = _FINISH_REASONS.get(self.raw_reason, "unknown")
        finish = ModelFinish(
            reason=reason,
            usage=self.usage,
            raw_reason=self.raw_reason,
            response_id=self.response_id,
            response_model=self.response_model,
        )
        out.append(Chunk(type="finish", payload=finish))
        return out

    def _text(self, text: str) -> list[Chunk]:
        out = self._close_reasoning()
        if not self.text_id:
            self.text_id = _common.block_id("text")
            out.append(Chunk.of(TextStart(id=self.text_id)))
        out.append(Chunk.of(TextDelta(id=self.text_id, text=text)))
        return out

    def _reasoning(self, text: str) -> list[Chunk]:
        out = self._close_text()
        if not self.reasoning_id:
            self.reasoning_id = _common.block_id("reasoning")
            out.append(Chunk.of(ReasoningStart(id=self.reasoning_id)))
        out.append(Chunk.of(ReasoningDelta(id=self.reasoning_id, text=text)))
        return out

    def _tool_call(self, tc: Any) -> list[Chunk]:
        out = self._close_text() + self._close_reasoning()
        fn = tc.function
        call = self.tool_calls.get(tc.index)
        if call is None:
            call = _ToolCallState(
                id=tc.id or _common.block_id("call"), name=(fn.name if fn else None) or ""
            )
            self.tool_calls[tc.index] = call
            out.append(
                Chunk.of(ToolCallInputStreamingStart(tool_call_id=call.id, tool_name=call.name))
            )
        if fn is not None and fn.arguments:
            call.args += fn.arguments
            out.append(
                Chunk.of(
                    ToolCallDelta(
                        tool_call_id=call.id, args_text_delta=fn.arguments, tool_name=call.name
                    )
                )
            )
        return out

    def _close_text(self) -> list[Chunk]:
        if not self.text_id:
            return []
        chunk = Chunk.of(TextEnd(id=self.text_id))
        self.text_id = ""
        return [chunk]

    def _close_reasoning(self) -> list[Chunk]:
        if not self.reasoning_id:
            return []
        chunk = Chunk.of(ReasoningEnd(id=self.reasoning_id))
        self.reasoning_id = ""
        return [chunk]


def _usage(u: Any) -> Usage:
    completion = u.completion_tokens_details
    prompt = u.prompt_tokens_details
    return Usage(
        input_tokens=u.prompt_tokens or 0,
        output_tokens=u.completion_tokens or 0,
        total_tokens=u.total_tokens or 0,
        reasoning_tokens=(completion.reasoning_tokens or 0) if completion else 0,
        cached_input_tokens=(prompt.cached_tokens or 0) if prompt else 0,
    )


# --- the prompt -----------------------------------------------------------------------------


def convert_prompt(prompt: list[PromptMessage]) -> list[dict[str, Any]]:
    """Treadle's prompt as Chat Completions ``messages``.

    Reasoning parts are dropped: Chat Completions has no field to send them back in.
    """
    out: list[dict[str, Any]] = []
    for message in prompt:
        if message.role == "system":
            out.append({"role": "system", "content": _common.joined_text(message.content)})
        elif message.role == "user":
            out.append({"role": "user", "content": _user_content(message.content)})
        elif message.role == "assistant":
            out.append(_assistant(message.content))
        else:
            out.extend(_tool_results(message.content))
    return out


def _user_content(parts: list[Any]) -> str | list[dict[str, Any]]:
    if all(isinstance(p, TextPart) for p in parts):
        return _common.joined_text(parts)
    content: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, TextPart):
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, FilePart):
            content.append(_file(part))
        elif isinstance(part, ToolResultPart):
            # A result in a user message has no tool message to ride in; keep it readable.
            content.append({"type": "text", "text": _common.encode_tool_result(part.result)})
    return content


def _file(part: FilePart) -> dict[str, Any]:
    data_url = (
        f"data:{part.mime_type};base64,{base64.b64encode(part.data).decode('ascii')}"
        if part.data
        else ""
    )
    if part.mime_type.startswith("image/"):
        return {"type": "image_url", "image_url": {"url": part.url or data_url}}
    if data_url:
        return {
            "type": "file",
            "file": {"file_data": data_url, "filename": part.filename or "file"},
        }
    return {"type": "text", "text": f"[file {part.filename or part.mime_type}: {part.url}]"}


def _assistant(parts: list[Any]) -> dict[str, Any]:
    text = _common.joined_text(parts)
    calls = [
        {
            "id": p.tool_call_id,
            "type": "function",
            "function": {"name": p.tool_name, "arguments": _common.encode_tool_args(p.args)},
        }
        for p in parts
        if isinstance(p, ToolCallPart)
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    elif not text:
        message["content"] = ""
    return message


def _tool_results(parts: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "role": "tool",
            "tool_call_id": p.tool_call_id,
            "content": _common.encode_tool_result(p.result),
        }
        for p in parts
        if isinstance(p, ToolResultPart)
    ]


def _tool(spec: ToolSpec) -> dict[str, Any]:
    fn: dict[str, Any] = {"name": spec.name, "parameters": spec.input_schema}
    if spec.description:
        fn["description"] = spec.description
    return {"type": "function", "function": fn}


def _tool_choice(choice: Any) -> Any:
    if isinstance(choice, dict):
        return {"type": "function", "function": {"name": choice["tool_name"]}}
    return choice
