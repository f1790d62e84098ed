"""A language model that plays scripted responses, in process (no HTTP, no SDK)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from ..core.chunks import (
    Chunk,
    TextDelta,
    TextEnd,
    TextStart,
    ToolCallDelta,
    ToolCallInputStreamingEnd,
    ToolCallInputStreamingStart,
    ToolCallPayload,
    Usage,
)
from ..providers.base import ModelConfig, ModelFinish, ModelRequest

Response = list[Chunk]


def text_response(deltas: list[str] | str, *, usage: Usage | None = None) -> Response:
    """``text-start``, one ``text-delta`` per item, ``text-end`` and ``finish`` (stop)."""
    items = [deltas] if isinstance(deltas, str) else deltas
    chunks = [Chunk.of(TextStart("t0"))]
    chunks += [Chunk.of(TextDelta("t0", d)) for d in items]
    chunks.append(Chunk.of(TextEnd("t0")))
    n = len(items)
    chunks.append(Chunk("finish", ModelFinish("stop", usage or Usage(10, n, 10 + n))))
    return chunks


def tool_call_response(name: str, args: dict[str, Any], *, call_id: str = "call_1") -> Response:
    """One tool call with its arguments streamed in one delta, then ``finish`` (tool-calls)."""
    text = json.dumps(args)
    return [
        Chunk.of(ToolCallInputStreamingStart(call_id, name)),
        Chunk.of(ToolCallDelta(call_id, text, name)),
        Chunk.of(ToolCallInputStreamingEnd(call_id)),
        Chunk.of(ToolCallPayload(call_id, name, args)),
        Chunk("finish", ModelFinish("tool-calls", Usage(10, 1, 11))),
    ]


class ScriptedModel:
    """Plays one response per call; a callable gets the ``ModelRequest`` and returns one."""

    def __init__(self, script: list[Response | Callable[[ModelRequest], Response]] | None = None,
                 *, provider: str = "scripted", model_id: str = "scripted") -> None:
        self.script = list(script or [])
        self.requests: list[ModelRequest] = []
        self._provider = provider
        self._model_id = model_id

    @property
    def provider(self) -> str:
        return self._provider

    @property
    def model_id(self) -> str:
        return self._model_id

    def add(self, *responses: Response | Callable[[ModelRequest], Response]) -> None:
        self.script.extend(responses)

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        self.requests.append(request)
        if not self.script:
            raise AssertionError("the scripted model ran out of responses")
        step = self.script.pop(0)
        response = step(request) if callable(step) else step
        for chunk in response:
            yield Chunk(chunk.type, chunk.payload)


class ScriptedModels:
    """A model router whose every model is ``model``: ``AgentLoop(registry, ScriptedModels(m), ...)``."""

    def __init__(self, model: ScriptedModel) -> None:
        self.model = model

    def validate(self, model_string: str) -> None:
        return None

    def check_access(self, config: ModelConfig) -> None:
        return None

    def resolve(self, config: ModelConfig) -> ScriptedModel:
        return self.model

    async def aclose(self) -> None:
        return None
