"""The provider protocol: what the loop asks of a language model.

A provider turns a ``ModelRequest`` into a stream of ``Chunk``s of these types, in order:
``response-metadata`` (optional), ``text-start``/``text-delta``/``text-end``,
``reasoning-start``/``reasoning-delta``/``reasoning-end``,
``tool-call-input-streaming-start``/``tool-call-delta``/``tool-call-input-streaming-end``,
``tool-call`` (arguments complete and parsed), and last exactly one ``finish`` chunk whose payload
is a ``ModelFinish``. An HTTP or connection failure raises ``APICallError``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeAlias

from ..core.chunks import Chunk, FinishReason, Usage
from ..core.specs import ModelSettings, ToolChoice, ToolSpec
from ..core.messages import Prompt


@dataclass
class ModelRequest:
    prompt: Prompt
    """System messages first (role ``system``), then the conversation."""
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    settings: ModelSettings = field(default_factory=ModelSettings)
    provider_options: dict[str, Any] = field(default_factory=dict)
    structured_output: dict[str, Any] | None = None
    """``{"schema": JSON schema, "name": str}`` for native JSON output."""


@dataclass
class ModelFinish:
    """Payload of the last chunk of a provider stream."""

    reason: FinishReason
    usage: Usage = field(default_factory=Usage)
    raw_reason: str = ""
    response_id: str = ""
    response_model: str = ""
    provider_metadata: dict[str, Any] | None = None


class LanguageModel(Protocol):
    """A resolved model. ``provider`` is e.g. ``"openai"``; ``model_id`` e.g. ``"gpt-4o-mini"``."""

    @property
    def provider(self) -> str: ...

    @property
    def model_id(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]: ...


@dataclass
class ModelConfig:
    """How to reach a model: a router string ``provider/model`` and optional overrides."""

    id: str
    base_url: str = ""
    max_retries: int | None = None
    fallbacks: list[ModelConfig] = field(default_factory=list)
    credential: str = ""
    """An operator-configured provider credential to use instead of the server's own key."""
